package io.leasekeeper;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import java.net.URISyntaxException;

/**
 * The imports between the service's packages ({@code io.leasekeeper.*}, its main classes only: neither its tests nor
 * the client library, the starter or the command line, which are artifacts of their own), pinned as they are. The
 * features ({@code lease}, {@code wait}, {@code sweeper}, {@code limits}, {@code idempotency}, {@code audit},
 * {@code retention}, {@code metrics}, {@code security}, {@code openapi}) sit between a floor that every one of them
 * may import ({@code config}, {@code web}, {@code key}) and a top that none of them imports (the periodic
 * {@code jobs}, the {@code console}, the {@code replication} report). Each rule says what it protects; a change that
 * breaks one either moves a class to the side it belongs to or puts an interface on the lower side, and otherwise
 * changes the rule and docs/guides/development.md ("Layout") together, with a decision record.
 */
@AnalyzeClasses(packagesOf = LeasekeeperApplication.class,
        importOptions = {ImportOption.DoNotIncludeTests.class, PackageGraphTest.ServiceClassesOnly.class})
class PackageGraphTest {

    private static final String SERVICE = "io.leasekeeper..";

    /**
     * No two packages import each other, directly or around a loop. A cycle makes its packages one: none of them
     * can be read, tested or changed without the others, and a new import anywhere along it goes unnoticed.
     */
    @ArchTest
    static final ArchRule packagesFormNoCycle = slices().matching("io.leasekeeper.(*)..").should().beFreeOfCycles();

    /**
     * {@code config} (the settings every feature reads, the JSON rules, the batching the jobs share) imports no
     * other package: every feature imports it, so any import of a feature from here would tie every feature to that
     * one, as the periodic jobs did while they were declared here.
     */
    @ArchTest
    static final ArchRule configImportsNoOtherPackage = onlyImports("io.leasekeeper.config..");

    /**
     * {@code web} (problem answers, error codes, body limits, the filters' order, trace ids) imports only
     * {@code config}: it is the HTTP floor of every feature, and a feature's class in it would make each request's
     * plumbing change with that feature.
     */
    @ArchTest
    static final ArchRule webImportsOnlyConfig = onlyImports("io.leasekeeper.web..", "io.leasekeeper.config..");

    /**
     * {@code key} (the key model and the normalization of targets) imports no other package: it is plain values and
     * rules, shared by the lease operations, the token rules and the API document, and its tests need neither a
     * database nor a Spring context.
     */
    @ArchTest
    static final ArchRule keyImportsNoOtherPackage = onlyImports("io.leasekeeper.key..");

    /**
     * No other package imports the periodic {@code jobs}: they schedule the features' work, so they depend on the
     * features and never the other way round (a feature runs its work when called, not knowing when).
     */
    @ArchTest
    static final ArchRule nothingImportsJobs = importedByNone("io.leasekeeper.jobs..");

    /**
     * No other package imports the {@code console} (its security chain and routes): it is one client of the API
     * among others, served beside it, and the API works the same without it.
     */
    @ArchTest
    static final ArchRule nothingImportsConsole = importedByNone("io.leasekeeper.console..");

    /**
     * No other package imports {@code replication} (the replicas' health): it reports on the database to the health
     * endpoint and nothing decides by it.
     */
    @ArchTest
    static final ArchRule nothingImportsReplication = importedByNone("io.leasekeeper.replication..");

    private static ArchRule onlyImports(String pkg, String... alsoAllowed) {
        String[] allowed = new String[alsoAllowed.length + 1];
        allowed[0] = pkg;
        System.arraycopy(alsoAllowed, 0, allowed, 1, alsoAllowed.length);
        return classes().that().resideInAPackage(pkg)
                .should().onlyDependOnClassesThat(resideOutsideOfPackage(SERVICE).or(resideInAnyPackage(allowed)));
    }

    private static ArchRule importedByNone(String pkg) {
        return noClasses().that().resideOutsideOfPackage(pkg).should().dependOnClassesThat().resideInAPackage(pkg);
    }

    /**
     * The classes compiled from this module's {@code src/main/java}: the client library, the starter and the command
     * line share the {@code io.leasekeeper} prefix and are on the test class path, but are no package of the service.
     */
    static final class ServiceClassesOnly implements ImportOption {

        private static final String ROOT = serviceRoot();

        @Override
        public boolean includes(Location location) {
            return location.asURI().toString().startsWith(ROOT);
        }

        private static String serviceRoot() {
            try {
                return LeasekeeperApplication.class.getProtectionDomain().getCodeSource().getLocation().toURI()
                        .toString();
            } catch (URISyntaxException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
