"""What an operator watches the service by: health and readiness probes (health), metrics
in the Prometheus text format (metrics, exposition), request ids (requestid) and the log
format (logformat), wired in by one middleware placed first (middleware)."""
