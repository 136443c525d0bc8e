package io.leasekeeper.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Stream;

/**
 * CPU time spent on this machine during a window, by who spent it: the service, PostgreSQL (its live
 * processes, and through the postmaster's children times those that ended meanwhile, such as pgbench's
 * backends), pgbench (a child of this JVM, counted once it has been waited for), and the load clients (this
 * JVM). Read from /proc, so Linux only. In cores: CPU seconds per second of the window. "The service" may
 * be several processes (two instances), or, for etcd's workload, etcd.
 */
final class CpuUse {

    record Cores(double service, double postgres, double pgbench, double clients) {

        /** Milliseconds of CPU per unit of work, at {@code perSecond} units per second. */
        static double millisPer(double cores, double perSecond) {
            return cores * 1000 / perSecond;
        }
    }

    private record Ticks(long service, long postgres, long pgbench, long clients, long nanos) {
    }

    private static final double TICKS_PER_SECOND = ticksPerSecond();

    private final Set<Long> servicePids;
    private final long postmasterPid;
    private final long ownPid = ProcessHandle.current().pid();
    private Ticks start;

    CpuUse(long servicePid, long postmasterPid) {
        this(Set.of(servicePid), postmasterPid);
    }

    CpuUse(Set<Long> servicePids, long postmasterPid) {
        this.servicePids = Set.copyOf(servicePids);
        this.postmasterPid = postmasterPid;
    }

    /** The parent of a backend. */
    static long parentOf(long pid) throws IOException {
        return Long.parseLong(fields(Files.readString(Path.of("/proc", String.valueOf(pid), "stat")))[1]);
    }

    void start() throws IOException {
        start = now();
    }

    Cores stop() throws IOException {
        Ticks end = now();
        double seconds = (end.nanos() - start.nanos()) / 1e9;
        return new Cores(cores(end.service() - start.service(), seconds),
                cores(end.postgres() - start.postgres(), seconds),
                cores(end.pgbench() - start.pgbench(), seconds),
                cores(end.clients() - start.clients(), seconds));
    }

    private static double cores(long ticks, double seconds) {
        return ticks / TICKS_PER_SECOND / seconds;
    }

    private Ticks now() throws IOException {
        long service = 0;
        long postgres = 0;
        long pgbench = 0;
        long clients = 0;
        try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
            for (Path dir : processes.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                String stat;
                try {
                    stat = Files.readString(dir.resolve("stat"));
                } catch (IOException gone) {
                    continue; // ended since the listing
                }
                long pid = Long.parseLong(dir.getFileName().toString());
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                String[] f = fields(stat);
                long own = Long.parseLong(f[11]) + Long.parseLong(f[12]);        // utime + stime
                long children = Long.parseLong(f[13]) + Long.parseLong(f[14]);   // cutime + cstime
                if (servicePids.contains(pid)) {
                    service += own;
                } else if (pid == ownPid) {
                    clients += own;
                    pgbench += children;
                } else if (name.equals("postgres")) {
                    postgres += own + (pid == postmasterPid ? children : 0);
                }
            }
        }
        return new Ticks(service, postgres, pgbench, clients, System.nanoTime());
    }

    /** The fields after the command name, which may itself hold spaces: [0] is the state, [1] the parent. */
    private static String[] fields(String stat) {
        return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    }

    private static double ticksPerSecond() {
        try {
            Process getconf = new ProcessBuilder("getconf", "CLK_TCK").start();
            String out = new String(getconf.getInputStream().readAllBytes()).trim();
            getconf.waitFor();
            return Double.parseDouble(out);
        } catch (IOException | InterruptedException | NumberFormatException e) {
            return 100; // Linux's USER_HZ nearly everywhere
        }
    }
}
