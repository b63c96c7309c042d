package dev.checkout.connect;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * How Debezium's measurement publisher waits for its next event (see {@link QueueTimerAgent}).
 *
 * <p>Each connector's {@code MeasurementCollector} has a publisher thread that loops on {@code queue.poll(100 ms)}
 * and, when that times out, only checks whether it was interrupted: a quiet connector's publisher wakes 10 times a
 * second for nothing. {@code MeasurementCollector.stop()} ends the thread with an interrupt, which also ends a
 * {@code take()}: the publisher waits for its next event with {@code take()} instead.
 */
public final class QuietMeasurements {
  private QuietMeasurements() {}

  /** Replaces {@code queue.poll(timeout, unit)} inside {@code MeasurementPublisher.run()}. */
  public static Object poll(BlockingQueue<?> queue, long timeout, TimeUnit unit) throws InterruptedException {
    return queue.take();
  }
}
