// One tap process per group of suites: a process costs about a second to start, a suite milliseconds.
import './service/config.js'
import './service/service.js'
import './service/errors.js'
import './service/security.js'
import './service/dashboard.js'
import './service/logging.js'
import './service/readme.js'
