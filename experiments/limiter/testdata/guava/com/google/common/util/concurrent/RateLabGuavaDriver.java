// The differential test's driver (guava_smooth_test.go): runs streams of
// arrivals through the real Guava RateLimiter on a fake clock and prints its
// decisions. It sits in Guava's package to reach the package-private
// SleepingStopwatch and the constructors that take one (Guava 31.1 as
// Debian ships it: RateLimiter.create(double, SleepingStopwatch),
// RateLimiter.create(double, long, TimeUnit, double, SleepingStopwatch),
// new SmoothRateLimiter.SmoothBursty(SleepingStopwatch, double)).
//
// Input, one stream after another:
//   bursty <permitsPerSecond> <maxBurstSeconds> <timeoutMicros> <n>
//   warming <permitsPerSecond> <warmupMicros> <timeoutMicros> <n>
// followed by n arrival times in nanoseconds from the limiter's creation,
// non-decreasing, whitespace separated. Output: one line per stream, for
// each arrival the microseconds tryAcquire(1, timeout, MICROSECONDS) slept
// (its wait) or -1 when it returned false.
package com.google.common.util.concurrent;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

public final class RateLabGuavaDriver {
  /** A stopwatch that reads the arrival's time and records sleeps instead of sleeping. */
  static final class FakeStopwatch extends RateLimiter.SleepingStopwatch {
    long nanos;
    long slept;

    @Override
    protected long readMicros() {
      return TimeUnit.NANOSECONDS.toMicros(nanos);
    }

    @Override
    protected void sleepMicrosUninterruptibly(long micros) {
      slept = micros;
    }
  }

  private RateLabGuavaDriver() {}

  public static void main(String[] args) throws IOException {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII), 1 << 16);
    BufferedWriter out =
        new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.US_ASCII), 1 << 16);
    String line;
    while ((line = in.readLine()) != null) {
      line = line.trim();
      if (line.isEmpty()) {
        continue;
      }
      String[] h = line.split(" ");
      double rate = Double.parseDouble(h[1]);
      long timeoutMicros = Long.parseLong(h[3]);
      int n = Integer.parseInt(h[4]);
      FakeStopwatch clock = new FakeStopwatch();
      clock.nanos = 0;
      RateLimiter limiter;
      if (h[0].equals("bursty")) {
        double maxBurstSeconds = Double.parseDouble(h[2]);
        if (maxBurstSeconds == 1.0) {
          limiter = RateLimiter.create(rate, clock); // what RateLimiter.create(rate) builds
        } else {
          SmoothRateLimiter.SmoothBursty b = new SmoothRateLimiter.SmoothBursty(clock, maxBurstSeconds);
          b.setRate(rate);
          limiter = b;
        }
      } else {
        long warmupMicros = Long.parseLong(h[2]);
        limiter = RateLimiter.create(rate, warmupMicros, TimeUnit.MICROSECONDS, 3.0, clock);
      }
      String[] ts = in.readLine().trim().split(" ");
      if (ts.length != n) {
        throw new IOException("stream of " + n + " arrivals has " + ts.length);
      }
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < n; i++) {
        clock.nanos = Long.parseLong(ts[i]);
        clock.slept = -2;
        boolean ok = limiter.tryAcquire(1, timeoutMicros, TimeUnit.MICROSECONDS);
        if (i > 0) {
          sb.append(' ');
        }
        sb.append(ok ? clock.slept : -1);
      }
      out.write(sb.toString());
      out.write('\n');
    }
    out.flush();
  }
}
