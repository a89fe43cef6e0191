// One tap process per group of suites: a process costs about a second to start, a suite milliseconds.
import './audit/stage-deadlines.js'
