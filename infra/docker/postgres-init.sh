#!/usr/bin/env bash
# docker-compose: one database and one login role per service, plus the replication role Debezium uses.
# Mirrors provisionDatabases() of infra/local/src/postgres.ts (a test checks both name the same databases).
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" <<SQL
CREATE ROLE debezium WITH LOGIN REPLICATION PASSWORD '${CDC_DB_PASSWORD}';
SQL
for db in order_svc inventory_svc payment_svc fulfillment_svc; do
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" <<SQL
CREATE ROLE ${db} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${DEV_DB_PASSWORD}';
CREATE DATABASE ${db} OWNER ${db};
REVOKE ALL ON DATABASE ${db} FROM PUBLIC;
GRANT CONNECT ON DATABASE ${db} TO debezium;
\c ${db}
ALTER SCHEMA public OWNER TO ${db};
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO debezium;
ALTER DEFAULT PRIVILEGES FOR ROLE ${db} IN SCHEMA public GRANT SELECT ON TABLES TO debezium;
SQL
done
