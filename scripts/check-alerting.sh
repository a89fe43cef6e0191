#!/usr/bin/env bash
# The shipped alerting, checked with the tools of Prometheus and Alertmanager (Debian: apt-get
# install prometheus prometheus-alertmanager): the rules parse, every alert passes its unit tests,
# the example configuration loads them, the example Alertmanager configuration is valid and routes
# each severity to its receiver. Run it again after editing deploy/ (the Grafana address, a
# threshold, a receiver).
set -euo pipefail
cd "$(dirname "$0")/../deploy/prometheus"
promtool check rules frb-tracer.rules.yml
promtool test rules frb-tracer.rules.test.yml
promtool check config prometheus.example.yml

alertmanager=../alertmanager/alertmanager.yml
amtool check-config "$alertmanager"
# amtool config routes test exits 1 when the alert does not reach the receiver named.
amtool config routes test --config.file="$alertmanager" --verify.receivers=pager severity=critical alertname=TracerDown
amtool config routes test --config.file="$alertmanager" --verify.receivers=tickets severity=warning alertname=TracerEventsStuck site=kko
amtool config routes test --config.file="$alertmanager" --verify.receivers=tickets severity=warning alertname=TracerKeptAuditDiffered
