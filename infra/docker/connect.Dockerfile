# The Kafka Connect worker of docker-compose.yml: Debezium's image plus the worker's Java agent (infra/connect-agent),
# built from source in the first stage with the same Maven command the local stack runs. The Debezium version is
# the one infra/local/pom.xml pins (a spec checks the two agree).
#   docker build -f infra/docker/connect.Dockerfile --build-arg DEBEZIUM_VERSION=3.6.1.Final .
ARG DEBEZIUM_VERSION=3.6.1.Final

FROM maven:3.9-eclipse-temurin-17 AS agent
WORKDIR /agent
COPY infra/connect-agent/pom.xml ./
COPY infra/connect-agent/src src
RUN mvn -B -q -Dagent.out=/out package

FROM quay.io/debezium/connect:${DEBEZIUM_VERSION}
# The agent's manifest finds Byte Buddy beside it.
COPY --from=agent /out/*.jar /kafka/connect-agent/
# The image's scripts pass KAFKA_OPTS to the worker's JVM.
ENV KAFKA_OPTS=-javaagent:/kafka/connect-agent/connect-agent.jar
