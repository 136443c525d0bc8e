package io.leasekeeper.web;

import java.util.Collection;
import java.util.Locale;

/**
 * The name a person most likely meant when they wrote one that does not exist: {@code holdr} for {@code holder},
 * {@code vaule} for {@code value}, {@code ttl} for {@code ttlSeconds}, {@code TTL_seconds} for {@code ttlSeconds}.
 * {@code token} for {@code fencingToken}. Names are compared without case, underscores or hyphens. A known name is
 * close when it holds the written one (of at least three characters) or is at most a third of the written one's
 * length of edits away (at least one), an edit being a character inserted, removed, replaced, or two neighbours
 * swapped; the fewest edits away wins.
 */
final class CloseNames {

    private static final int MIN_PART = 3;
    /** Nobody mistypes a name this long; comparing it would only cost time. */
    private static final int MAX_WRITTEN = 64;

    private CloseNames() {
    }

    /** The closest known name (the first in {@code known}'s order among equally close ones), or null if none is close. */
    static String closest(String written, Collection<String> known) {
        String w = fold(written);
        if (w.length() > MAX_WRITTEN) {
            return null;
        }
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String name : known) {
            String k = fold(name);
            int distance = distance(w, k);
            boolean close = distance <= Math.max(1, w.length() / 3) || (w.length() >= MIN_PART && k.contains(w));
            if (close && distance < bestDistance) {
                best = name;
                bestDistance = distance;
            }
        }
        return best;
    }

    private static String fold(String name) {
        return name.replace("_", "").replace("-", "").toLowerCase(Locale.ROOT);
    }

    /** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
