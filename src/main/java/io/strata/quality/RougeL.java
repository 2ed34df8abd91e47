package io.strata.quality;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * ROUGE-L (Lin 2004) recall: the length of the longest common subsequence of tokens, divided by the reference's
 * token count. Tokens as in the reference implementation ({@code rouge_score}, without stemming): lower-cased runs of
 * letters and digits; punctuation and quote styles (’ vs ') therefore do not matter.
 */
public final class RougeL {
    private RougeL() {}

    public static List<String> tokens(String text) {
        List<String> out = new ArrayList<>();
        String lower = text.toLowerCase(Locale.ROOT);
        int start = -1;
        for (int i = 0; i <= lower.length(); i++) {
            boolean word = i < lower.length() && Character.isLetterOrDigit(lower.charAt(i));
            if (word && start < 0) {
                start = i;
            } else if (!word && start >= 0) {
                out.add(lower.substring(start, i));
                start = -1;
            }
        }
        return out;
    }

    /** LCS(reference, candidate) / |reference|; 0 for an empty reference. */
    public static double recall(List<String> reference, List<String> candidate) {
        if (reference.isEmpty()) {
            return 0;
        }
        return (double) lcs(reference, candidate) / reference.size();
    }

    /** Length of the longest common subsequence, O(|a|·|b|) time, O(|a|) memory. */
    static int lcs(List<String> a, List<String> b) {
        int[] prev = new int[a.size() + 1];
        int[] cur = new int[a.size() + 1];
        for (String y : b) {
            for (int i = 1; i <= a.size(); i++) {
                cur[i] = a.get(i - 1).equals(y) ? prev[i - 1] + 1 : Math.max(prev[i], cur[i - 1]);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[a.size()];
    }
}
