package dev.checkout.connect;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.isDeclaredBy;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.returns;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;
import static net.bytebuddy.matcher.ElementMatchers.takesNoArguments;

import java.lang.instrument.Instrumentation;
import java.lang.reflect.Method;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.AsmVisitorWrapper;
import net.bytebuddy.asm.MemberSubstitution;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.utility.JavaModule;

/**
 * Stops Debezium's change-event queue from spinning on the clock at the end of every quiet poll.
 *
 * <p>{@code ChangeEventQueue.poll()} waits on a {@code Threads.Timer} of {@code poll.interval.ms}: it loops
 * {@code while (!timer.expired())} and parks for {@code timer.remaining().toMillis()} ms when that is above 0. The
 * timer counts whole milliseconds: {@code expired()} is {@code elapsed > timeout} while {@code remaining()} is
 * {@code timeout - elapsed}. When the park ends with {@code elapsed == timeout} the timer is not expired, the
 * remaining time is 0, nothing parks, and the task thread loops on the clock until the millisecond turns: about
 * 1 ms of a core per quiet poll, per connector, 5 times a second at our 200 ms interval (Debezium 3.6.1 and 3.7.1
 * alike).
 *
 * <p>This agent rewrites {@code remaining()} of every {@code io.debezium.util.Threads.Timer} so that a timer that
 * has not expired reports at least 1 ms left, which is true of a timer that counts whole milliseconds: the queue
 * parks for the last millisecond instead of spinning through it. Nothing else changes: a record still wakes the
 * parked poller at once, and an expired timer reports what it reported before.
 *
 * <p>It also lets the Connect task's poll of a quiet queue wait 1 s instead of {@code poll.interval.ms}. That setting
 * paces two threads: the WAL reader's pause after empty reads, which is what each outbox hop waits for, and the
 * queue's poll, which wakes the task thread 1000/interval times a second only to return nothing (20 at our 50 ms,
 * 0.4% of a core per connector on this VM, with the whole Connect loop around each empty poll). The queue's poll
 * needs no short interval: with {@code max.batch.size} 1 every enqueued record signals the parked poller, which
 * returns it at once. 1 s stays inside Debezium's own bound for giving control back (5 s), so pausing or stopping a
 * task waits at most that long for the poll in progress.
 *
 * <p>A Postgres task's {@code commit()}, which Connect calls after every offset flush, reads the task's offsets back
 * from Kafka only when records were acknowledged since the commit before the last one ({@link QuietCommit}), and
 * Debezium's measurement publisher waits for its next event instead of polling its queue every 100 ms
 * ({@link QuietMeasurements}).
 */
public final class QueueTimerAgent {
  static final String TIMER = "io.debezium.util.Threads$Timer";
  static final String QUEUE = "io.debezium.connector.base.ChangeEventQueue";
  static final String PG_STREAM = "org.postgresql.core.PGStream";
  static final String REPLICATION_STREAM = "org.postgresql.core.v3.replication.V3PGReplicationStream";
  static final String TASK = "io.debezium.connector.postgresql.PostgresConnectorTask";
  static final String PUBLISHER = "io.debezium.metrics.stats.MeasurementCollector$MeasurementPublisher";
  static final String TAG = "[checkout connect-agent] ";

  /** The package prefix of Debezium's timer classes, whose {@code remaining()} is patched. */
  static final String TIMERS = "io.debezium.util.Threads$";

  /** Every other patched class, with what the worker's log says was patched in it. */
  static final Map<String, String> PATCHED =
      Map.of(
          QUEUE, ".<init>: quiet poll 1 s",
          PG_STREAM, ".hasMessagePending(): quiet look",
          REPLICATION_STREAM, ".readInternal(): quiet clock",
          TASK, ".commit(): only after acknowledged records",
          PUBLISHER, ".run(): waits for an event");

  /** pgjdbc's look calls this in place of {@code Socket.setSoTimeout(int)}. */
  private static final Method SET_SO_TIMEOUT =
      method(QuietReplicationWait.class, "setSoTimeout", Socket.class, int.class);

  /** Debezium's measurement publisher calls this in place of {@code BlockingQueue.poll(long, TimeUnit)}. */
  private static final Method TAKE =
      method(QuietMeasurements.class, "poll", BlockingQueue.class, long.class, TimeUnit.class);

  private QueueTimerAgent() {}

  private static Method method(Class<?> type, String name, Class<?>... parameters) {
    try {
      return type.getMethod(name, parameters);
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException(e);
    }
  }

  public static void premain(String arguments, Instrumentation instrumentation) {
    new AgentBuilder.Default()
        .disableClassFormatChanges()
        // Only Debezium's util package is considered: the cheap name test runs before the hierarchy is read.
        .type(nameStartsWith(TIMERS).and(not(isInterface())).and(hasSuperType(named(TIMER))))
        .transform(
            visit(
                Advice.to(AtLeastOneMillisecond.class)
                    .on(named("remaining").and(takesNoArguments()).and(returns(Duration.class)))))
        .type(named(QUEUE))
        .transform(visit(Advice.to(QuietPollOfOneSecond.class).on(isConstructor())))
        .type(named(PG_STREAM))
        .transform(
            visit(
                MemberSubstitution.relaxed()
                    .method(named("setSoTimeout").and(isDeclaredBy(Socket.class)))
                    .replaceWith(SET_SO_TIMEOUT)
                    .on(named("hasMessagePending").and(takesNoArguments()))))
        .type(named(REPLICATION_STREAM))
        .transform(visit(Advice.to(ReadWalData.class).on(named("readInternal"))))
        .type(named(TASK))
        .transform(
            visit(
                Advice.to(CommitWhenDue.class).on(named("commit").and(takesNoArguments())),
                Advice.to(CountAcknowledged.class).on(named("commitRecord").and(takesArguments(2)))))
        .type(named(PUBLISHER))
        .transform(
            visit(
                MemberSubstitution.relaxed()
                    .method(named("poll").and(isDeclaredBy(BlockingQueue.class)).and(takesArguments(2)))
                    .replaceWith(TAKE)
                    .on(named("run").and(takesNoArguments()))))
        .with(new Report())
        .installOn(instrumentation);
    System.err.println(
        TAG
            + "installed: Debezium timers report at least 1 ms left until they expire; a quiet queue poll waits 1 s;"
            + " a quiet WAL reader's look waits for a first byte up to "
            + QuietReplicationWait.QUIET_WAIT_MS
            + " ms; a Postgres task's commit() reads its offsets back only after acknowledged records;"
            + " Debezium's measurement publisher waits for an event");
  }

  /**
   * Inlined at the start of {@code PostgresConnectorTask.commit()}: a commit with nothing acknowledged since the
   * commit before the last one is skipped (see {@link QuietCommit}).
   */
  static final class CommitWhenDue {
    private CommitWhenDue() {}

    @Advice.OnMethodEnter(skipOn = Advice.OnDefaultValue.class)
    static boolean enter(@Advice.This Object task) {
      return QuietCommit.due(task);
    }
  }

  /** Inlined at the start of {@code PostgresConnectorTask.commitRecord(record, metadata)}. */
  static final class CountAcknowledged {
    private CountAcknowledged() {}

    @Advice.OnMethodEnter
    static void enter(@Advice.This Object task) {
      QuietCommit.acknowledged(task);
    }
  }

  /**
   * Inlined at the end of pgjdbc's {@code V3PGReplicationStream.readInternal(boolean)}, which returns the next WAL
   * data message and handles the server's keepalives inside: only WAL data ends the thread's quiet. PostgreSQL sends
   * a logical walsender a keepalive about once a second while other databases of the cluster write, so a look that
   * merely found a message would never let the reader go quiet.
   */
  static final class ReadWalData {
    private ReadWalData() {}

    @Advice.OnMethodExit
    static void exit(@Advice.Return java.nio.ByteBuffer data) {
      QuietReplicationWait.read(data != null);
    }
  }

  /**
   * Inlined at the end of {@code ChangeEventQueue}'s constructor: its poll interval becomes at least 1 s. The
   * field is final, and a constructor may write it. The WAL reader reads {@code poll.interval.ms} from the connector
   * config, not from the queue, so its pause is unchanged.
   */
  static final class QuietPollOfOneSecond {
    private QuietPollOfOneSecond() {}

    @Advice.OnMethodExit
    static void exit(@Advice.FieldValue(value = "pollInterval", readOnly = false) Duration pollInterval) {
      if (pollInterval.toMillis() < 1000) pollInterval = Duration.ofMillis(1000);
    }
  }

  /** A transformer that applies these visitors to the matched type. */
  private static AgentBuilder.Transformer visit(AsmVisitorWrapper... wrappers) {
    return (builder, type, loader, module, domain) -> {
      for (AsmVisitorWrapper wrapper : wrappers) builder = builder.visit(wrapper);
      return builder;
    };
  }

  /** Inlined at the end of {@code remaining()}: a zero left on a timer that is not expired becomes 1 ms. */
  static final class AtLeastOneMillisecond {
    private AtLeastOneMillisecond() {}

    @Advice.OnMethodExit
    static void exit(@Advice.Return(readOnly = false) Duration remaining) {
      if (remaining.isZero()) remaining = Duration.ofMillis(1);
    }
  }

  /** Says in the worker's log which classes were patched, and why one could not be. */
  static final class Report extends AgentBuilder.Listener.Adapter {
    @Override
    public void onTransformation(
        TypeDescription type, ClassLoader loader, JavaModule module, boolean loaded, DynamicType dynamicType) {
      String what = PATCHED.getOrDefault(type.getName(), ".remaining()");
      System.err.println(TAG + "patched " + type.getName() + what);
    }

    @Override
    public void onError(String name, ClassLoader loader, JavaModule module, boolean loaded, Throwable error) {
      if (name.startsWith(TIMERS) || PATCHED.containsKey(name))
        System.err.println(TAG + "could not patch " + name + ": " + error);
    }
  }
}
