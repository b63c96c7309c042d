#!/usr/bin/env bash
# docker-compose: one database and one login role per service, plus the replication role Debezium uses.
# Mirrors provisionDatabases() of infra/local/src/postgres.ts (a test checks both name the same databases).
set -euo pipefail
# Databases with an outbox relayed by Debezium: its role may connect and read them.
OUTBOX_DBS="order_svc inventory_svc payment_svc fulfillment_svc"
# Databases without an outbox (the saga tracker only consumes events): Debezium has no access at all.
PLAIN_DBS="saga_svc"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" <<SQL
CREATE ROLE debezium WITH LOGIN REPLICATION PASSWORD '${CDC_DB_PASSWORD}';
SQL
for db in $OUTBOX_DBS $PLAIN_DBS; do
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" <<SQL
CREATE ROLE ${db} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${DEV_DB_PASSWORD}';
CREATE DATABASE ${db} OWNER ${db};
REVOKE ALL ON DATABASE ${db} FROM PUBLIC;
\c ${db}
ALTER SCHEMA public OWNER TO ${db};
REVOKE ALL ON SCHEMA public FROM PUBLIC;
SQL
done
for db in $OUTBOX_DBS; do
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" <<SQL
GRANT CONNECT ON DATABASE ${db} TO debezium;
\c ${db}
GRANT USAGE ON SCHEMA public TO debezium;
ALTER DEFAULT PRIVILEGES FOR ROLE ${db} IN SCHEMA public GRANT SELECT ON TABLES TO debezium;
SQL
done
