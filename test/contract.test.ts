// One tap process per group of suites: a process costs seconds to start and to end, a suite milliseconds.
import './contract/document.js'
// Also run alone, through Prism, by `npm run contract:prism`.
import './contract/openapi.js'
