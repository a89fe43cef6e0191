#!/usr/bin/env bash
# The shipped alerting, checked with Prometheus's own tool (Debian: apt-get install prometheus):
# the rules parse, every alert passes its unit tests, and the example configuration loads them.
# Run it again after editing deploy/prometheus/ (the Grafana address, a threshold).
set -euo pipefail
cd "$(dirname "$0")/../deploy/prometheus"
promtool check rules frb-tracer.rules.yml
promtool test rules frb-tracer.rules.test.yml
promtool check config prometheus.example.yml
