# Leasekeeper's image. Built from source with the Maven wrapper on a JDK 25, run on a JRE 25 as a
# non-root user from Spring Boot's extracted layers: the dependencies change rarely and the application
# often, so an image rebuilt after a code change differs in one small layer. The root filesystem can be
# read-only: the service writes only to /tmp (Tomcat's work directory), which the Helm chart mounts as
# an emptyDir. ContainerImageIT runs this file's extract and start commands on the built jar.

FROM eclipse-temurin:25-jdk AS build
WORKDIR /build
# The build of every artifact (pom.xml) with the service's own POM, the client library, its Spring Boot
# starter and the command line: every module the top POM lists must be there (the service's tests use all
# three); -pl :leasekeeper -am builds only the service and what it depends on. Maven's repository
# is a BuildKit cache, so that dependencies are downloaded once, not per build.
COPY mvnw pom.xml service-pom.xml ./
COPY .mvn .mvn
COPY client client
COPY starter starter
COPY cli cli
COPY src src
COPY db db
# The committed OpenAPI document: the test client is generated from it even when tests are skipped.
COPY docs/reference/openapi.json docs/reference/openapi.json
RUN --mount=type=cache,target=/root/.m2 ./mvnw -B -ntp -q package -DskipTests -pl :leasekeeper -am \
    && cp target/leasekeeper-*.jar application.jar
RUN java -Djarmode=tools -jar application.jar extract --layers --destination extracted

FROM eclipse-temurin:25-jre
WORKDIR /application
COPY --from=build /build/extracted/dependencies/ ./
COPY --from=build /build/extracted/spring-boot-loader/ ./
COPY --from=build /build/extracted/snapshot-dependencies/ ./
COPY --from=build /build/extracted/application/ ./
# A numeric user, so that Kubernetes can verify runAsNonRoot without an /etc/passwd entry.
USER 10001:10001
# The API, and the management port (health probes, Prometheus).
EXPOSE 8080 8081
# Heap from the container's memory limit; a JVM out of memory exits and is restarted instead of
# limping on. More flags: JAVA_TOOL_OPTIONS.
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-XX:+ExitOnOutOfMemoryError", "-Djava.io.tmpdir=/tmp", "-jar", "application.jar"]
