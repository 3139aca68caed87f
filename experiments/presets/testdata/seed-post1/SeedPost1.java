package dev.engnotes.labs.backpressure.collapse;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Runs the seed lab's Post 1 simulator (CollapseSimulator, as
 * CollapseScenario does: no-retry levels, then retry levels) at the
 * parameter sets of params.txt and writes each sweep as
 * LoadCollapseMain.writeSweepCsv does (its header and format string).
 * Usage: SeedPost1 params.txt outdir
 */
public final class SeedPost1 {
    public static void main(String[] args) throws IOException {
        Path out = Path.of(args[1]);
        Files.createDirectories(out);
        for (String line : Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8)) {
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s+");
            String name = f[0];
            long windowMs = Long.parseLong(f[1]);
            long serviceMs = Long.parseLong(f[2]);
            long deadlineMs = Long.parseLong(f[3]);
            int retries = Integer.parseInt(f[4]);
            long backoffMs = Long.parseLong(f[5]);
            String[] lv = f[6].split(",");
            CollapseSimulator sim = new CollapseSimulator(serviceMs, 100_000, deadlineMs, retries, backoffMs);
            List<LoadLevelResult> levels = new ArrayList<>();
            for (boolean retry : new boolean[] {false, true}) {
                for (String l : lv) {
                    levels.add(sim.run(Integer.parseInt(l), windowMs, retry));
                }
            }
            try (BufferedWriter w = Files.newBufferedWriter(out.resolve(name + ".csv"), StandardCharsets.UTF_8)) {
                w.write("mode,offered_rps,effective_rps,ideal_goodput_rps,goodput_rps,wasted_pct,p50_ms,p99_ms,avg_queue_depth");
                w.write("\n");
                for (LoadLevelResult level : levels) {
                    w.write(String.format(Locale.ROOT, "%s,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.2f",
                            level.mode(), level.offeredRps(), level.effectiveRps(), level.idealGoodputRps(),
                            level.goodputRps(), level.wastedPct(), level.p50Ms(), level.p99Ms(), level.avgQueueDepth()));
                    w.write("\n");
                }
            }
        }
    }
}
