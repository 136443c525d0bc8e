package io.leasekeeper.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A command and its descendants, stopped as {@code run} stops them on a loss: SIGTERM to every one, then SIGKILL
 * to those still alive {@code killAfter} later.
 *
 * <p>The descendants are listed when SIGTERM is sent and remembered: a grandchild that outlives its parent is
 * re-parented (no longer a descendant of the command) and still gets its SIGKILL. Those started after the
 * first list are found by listing again before SIGKILL, as long as their parent is still alive then.
 * {@link ProcessHandle} names a process by pid and start time, so a pid reused meanwhile is not signalled.
 */
final class ProcessTree {

    private final Process command;

    ProcessTree(Process command) {
        this.command = command;
    }

    /** SIGTERM, and SIGKILL after {@code killAfter} to what is left; returns once every one has ended. */
    void stop(Duration killAfter) {
        Set<ProcessHandle> tree = list();
        tree.forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + killAfter.toNanos();
        awaitEnd(tree, deadline);
        tree.addAll(list());
        List<ProcessHandle> alive = new ArrayList<>();
        for (ProcessHandle process : tree) {
            if (process.isAlive()) {
                process.destroyForcibly();
                alive.add(process);
            }
        }
        // Killed processes end at once; what may stay is a zombie whose parent never reaps it, dead already.
        awaitEnd(alive, System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
    }

    /** SIGTERM to the command only: a signal that {@code leasekeeper} itself received, passed on. */
    void terminate() {
        command.destroy();
    }

    /** SIGINT to the command only (the JDK sends only SIGTERM and SIGKILL itself). */
    void interrupt() {
        try {
            new ProcessBuilder("kill", "-INT", Long.toString(command.pid())).inheritIO().start();
        } catch (IOException e) {
            Leasekeeper.diagnose("cannot pass SIGINT on to the command: " + e.getMessage());
        }
    }

    private Set<ProcessHandle> list() {
        Set<ProcessHandle> tree = new LinkedHashSet<>();
        tree.add(command.toHandle());
        command.toHandle().descendants().forEach(tree::add);
        return tree;
    }

    /**
     * Polls until every process has ended or the deadline passes. {@link ProcessHandle#onExit()} would poll too,
     * for processes that are not this JVM's children, but from 300 ms apart: too slow for a loss.
     */
    private static void awaitEnd(Iterable<ProcessHandle> processes, long deadline) {
        while (anyAlive(processes) && deadline - System.nanoTime() > 0) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static boolean anyAlive(Iterable<ProcessHandle> processes) {
        for (ProcessHandle process : processes) {
            if (process.isAlive() && !zombie(process)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a process has ended but not been reaped yet: the JDK counts it alive until its parent (for an
     * orphan, init, which may reap only now and then) collects its status. Linux's /proc tells; elsewhere, no.
     */
    private static boolean zombie(ProcessHandle process) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
            int afterName = stat.lastIndexOf(')');
            return afterName > 0 && afterName + 2 < stat.length() && "ZX".indexOf(stat.charAt(afterName + 2)) >= 0;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
