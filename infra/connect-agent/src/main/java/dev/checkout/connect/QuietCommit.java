package dev.checkout.connect;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * Whether a Debezium Postgres task's {@code commit()} has anything to confirm (see {@link QueueTimerAgent}).
 *
 * <p>Kafka Connect calls {@code SourceTask.commit()} after every offset flush, every {@code offset.flush.interval.ms},
 * whether or not the flush wrote anything. Debezium's Postgres task answers by reading its offsets back from the
 * offsets topic ({@code getPreviousOffsets()}: a read to the end of {@code _connect-offsets}, which costs a
 * ListOffsets request of the worker's admin client and a fetch) and confirming that LSN to PostgreSQL. With nothing
 * acknowledged since, it reads back and confirms the offset it already confirmed.
 *
 * <p>Connect calls {@code commitRecord()} for each record the producer acknowledged (or a transformation dropped)
 * before it writes that record's offset at a later flush. A commit is due when a record was acknowledged since
 * the commit before the last one: a record acknowledged after a flush took its snapshot, but before the commit
 * that follows it, is written by the next flush, and the commit after that one confirms it. So every offset the
 * task flushes is still confirmed at the same commit as before, and a task whose producer acknowledged nothing
 * for two flush intervals skips the read. Debezium's heartbeat records are acknowledged like any other, so a quiet
 * database's slot still advances on each heartbeat.
 */
public final class QuietCommit {
  /** Per task: records acknowledged so far, and that count at the last and the second-last commit. */
  private static final Map<Object, long[]> COUNTS = Collections.synchronizedMap(new WeakHashMap<>());

  private QuietCommit() {}

  private static long[] of(Object task) {
    return COUNTS.computeIfAbsent(task, t -> new long[3]);
  }

  /** Called as the task's {@code commitRecord(record, metadata)} starts. */
  public static void acknowledged(Object task) {
    long[] counts = of(task);
    synchronized (counts) {
      counts[0]++;
    }
  }

  /** Called as the task's {@code commit()} starts: false skips it. */
  public static boolean due(Object task) {
    long[] counts = of(task);
    synchronized (counts) {
      boolean due = counts[0] != counts[2];
      counts[2] = counts[1];
      counts[1] = counts[0];
      return due;
    }
  }
}
