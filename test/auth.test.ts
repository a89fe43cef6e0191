// One tap process per group of suites: a process costs about a second to start, a suite milliseconds.
import './auth/clock.js'
import './auth/login.js'
import './auth/password-threads.js'
import './auth/refresh.js'
import './auth/roles.js'
import './auth/token-format.js'
import './auth/verify.js'
