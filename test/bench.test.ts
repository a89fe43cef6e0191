// One tap process per group of suites: a process costs about a second to start, a suite milliseconds.
import './bench/figures.js'
import './bench/report.js'
import './bench/memory.js'
import './bench/cpuprofile.js'
import './bench/ab-stats.js'
import './bench/ab-report.js'
