# Leasekeeper's image. Built from source with the Maven wrapper on a JDK 25, run on a JRE 25 as a
# non-root user from Spring Boot's extracted layers: the dependencies change rarely and the application
# often, so an image rebuilt after a code change differs in one small layer. The root filesystem can be
# read-only: the service writes only to /tmp (Tomcat's work directory), which the Helm chart mounts as
# an emptyDir. ContainerImageIT runs this file's extract and start commands on the built jar.

FROM eclipse-temurin:25-jdk AS build
WORKDIR /build
# The dependencies first, so that their layer is cached until pom.xml changes.
COPY mvnw pom.xml ./
COPY .mvn .mvn
RUN ./mvnw -B -ntp -q dependency:go-offline
COPY src src
COPY db db
# The committed OpenAPI document: the test client is generated from it even when tests are skipped.
COPY docs/openapi.json docs/openapi.json
RUN ./mvnw -B -ntp -q package -DskipTests && cp target/leasekeeper-*.jar application.jar
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
