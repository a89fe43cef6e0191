// One tap process per group of suites: a process costs about a second to start, a suite milliseconds.
import './cli/users.js'
import './cli/seed.js'
import './cli/import.js'
import './cli/demo-generator.js'
import './cli/demo-audit.js'
import './cli/audit.js'
import './cli/bounded-lines.js'
import './cli/configuration.js'
