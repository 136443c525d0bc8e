package io.leasekeeper.cli;

import io.leasekeeper.client.LeaseKey;
import io.leasekeeper.client.Target;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** A lease's key, as the API names it: {@code --target TYPE:VALUE} (split at its first colon) and {@code --actor} required. */
final class KeyOptions {

    @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--target", required = true, paramLabel = "TYPE:VALUE",
            description = "required: the target, e.g. opaque:repo/main (only the first ':' splits)")
    String target;

    @Option(names = "--actor", required = true, paramLabel = "NAME", description = "required: the actor")
    String actor;

    @Option(names = "--program", paramLabel = "NAME", description = "the program (default: the service's 'default')")
    String program;

    @Option(names = "--operation", paramLabel = "NAME", description = "the operation class (default: none)")
    String operation;

    LeaseKey key() {
        return new LeaseKey(program, target(spec, target), actor, operation);
    }

    static Target target(CommandLine.Model.CommandSpec spec, String typeAndValue) {
        int colon = typeAndValue.indexOf(':');
        if (colon <= 0) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--target must be TYPE:VALUE (for example opaque:repo/main), not '" + typeAndValue + "'");
        }
        return new Target(typeAndValue.substring(0, colon), typeAndValue.substring(colon + 1));
    }
}
