package dev.checkout.connect;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.returns;
import static net.bytebuddy.matcher.ElementMatchers.takesNoArguments;

import java.lang.instrument.Instrumentation;
import java.time.Duration;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
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
 */
public final class QueueTimerAgent {
  static final String TIMER = "io.debezium.util.Threads$Timer";
  static final String TAG = "[checkout connect-agent] ";

  private QueueTimerAgent() {}

  public static void premain(String arguments, Instrumentation instrumentation) {
    new AgentBuilder.Default()
        .disableClassFormatChanges()
        // Only Debezium's util package is considered: the cheap name test runs before the hierarchy is read.
        .type(nameStartsWith("io.debezium.util.Threads$").and(not(isInterface())).and(hasSuperType(named(TIMER))))
        .transform(QueueTimerAgent::patchRemaining)
        .with(new Report())
        .installOn(instrumentation);
    System.err.println(TAG + "installed: Debezium timers report at least 1 ms left until they expire");
  }

  private static DynamicType.Builder<?> patchRemaining(
      DynamicType.Builder<?> builder,
      TypeDescription type,
      ClassLoader loader,
      JavaModule module,
      java.security.ProtectionDomain domain) {
    return builder.visit(
        Advice.to(AtLeastOneMillisecond.class)
            .on(named("remaining").and(takesNoArguments()).and(returns(Duration.class))));
  }

  /** Inlined at the end of {@code remaining()}: a zero left on a timer that is not expired becomes 1 ms. */
  static final class AtLeastOneMillisecond {
    private AtLeastOneMillisecond() {}

    @Advice.OnMethodExit
    static void exit(@Advice.Return(readOnly = false) Duration remaining) {
      if (remaining.isZero()) remaining = Duration.ofMillis(1);
    }
  }

  /** Says in the worker's log which timer classes were patched, and why one could not be. */
  static final class Report extends AgentBuilder.Listener.Adapter {
    @Override
    public void onTransformation(
        TypeDescription type, ClassLoader loader, JavaModule module, boolean loaded, DynamicType dynamicType) {
      System.err.println(TAG + "patched " + type.getName() + ".remaining()");
    }

    @Override
    public void onError(String name, ClassLoader loader, JavaModule module, boolean loaded, Throwable error) {
      if (name.startsWith("io.debezium.util.Threads$"))
        System.err.println(TAG + "could not patch " + name + ": " + error);
    }
  }
}
