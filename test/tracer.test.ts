// One tap process per group of suites: a process costs about a second to start, a suite milliseconds.
import './tracer/time-window.js'
import './tracer/baseband-callbacks.js'
import './tracer/event-status.js'
import './tracer/writes.js'
import './tracer/events.js'
import './tracer/python-client.js'
import './tracer/unknown-members.js'
import './tracer/slow-clients.js'
