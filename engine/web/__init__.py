"""Operations over HTTP: the REST API, the dashboard, the Prometheus export (beside api/)."""
