package dev.checkout.connect;

import java.io.IOException;
import java.net.Socket;

/**
 * How long a quiet WAL reader's look at its replication socket may wait: called from pgjdbc's
 * {@code PGStream.hasMessagePending()} in place of its {@code Socket.setSoTimeout(1)} (see {@link QueueTimerAgent}).
 *
 * <p>Debezium's WAL reader looks for a message 5 times, each look waiting up to 1 ms on the socket, then sleeps
 * {@code poll.interval.ms}; a connector with nothing to read does that about 20 times a second, about 110 wakes.
 * Once the calling thread has seen no message for {@link #QUIET_AFTER_MS}, a look waits up to
 * {@link #QUIET_WAIT_MS} instead: the first byte still ends the wait at once, so an event arriving at a quiet
 * database is read as soon as it lands (sooner than after the sleep it would otherwise often fall into), and the
 * reader wakes about once a second (at stop 35's 200 ms it woke 5 times: 0.2% of a core per connector here).
 * While messages flow, every look waits 1 ms as before, so the sleep still gathers a busy stream's records into
 * batches.
 *
 * <p>Only WAL data counts as a message: the server's keepalives, about one a second while other databases of the
 * cluster write, do not. The state is per thread: each connector's reader thread reads one replication connection,
 * and pgjdbc calls these methods from the thread doing the read. pgjdbc looks at a socket this way only for copy
 * and notification reads, which Debezium's other connections do not make.
 */
public final class QuietReplicationWait {
  /** A reader quiet this long waits longer in each look. */
  public static final long QUIET_AFTER_MS = 1_000;

  /** The longest a quiet reader's look waits for a first byte. */
  public static final int QUIET_WAIT_MS = 1_000;

  private static final ThreadLocal<long[]> LAST_MESSAGE_AT = ThreadLocal.withInitial(() -> new long[] {0L});

  private QuietReplicationWait() {}

  /** Replaces {@code socket.setSoTimeout(timeout)} inside {@code hasMessagePending()}. */
  public static void setSoTimeout(Socket socket, int timeout) throws IOException {
    socket.setSoTimeout(timeout == 1 && quiet() ? QUIET_WAIT_MS : timeout);
  }

  /** Called as {@code V3PGReplicationStream.readInternal()} returns: WAL data ends the thread's quiet. */
  public static void read(boolean data) {
    if (data) LAST_MESSAGE_AT.get()[0] = System.nanoTime();
  }

  static boolean quiet() {
    long last = LAST_MESSAGE_AT.get()[0];
    return last == 0L || System.nanoTime() - last > QUIET_AFTER_MS * 1_000_000L;
  }
}
