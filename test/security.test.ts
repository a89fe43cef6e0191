// One tap process per group of suites: a process costs seconds to start and to end, a suite milliseconds.
import './security/body-limit.js'
import './security/hostile-input.js'
import './security/hostile-socket.js'
import './security/timeouts.js'
import './security/token-attacks.js'
