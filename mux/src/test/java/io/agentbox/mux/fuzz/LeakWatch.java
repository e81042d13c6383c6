package io.agentbox.mux.fuzz;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.List;
import java.util.stream.Collectors;
import org.slf4j.LoggerFactory;

/**
 * Captures Netty's leak reports (logged at ERROR by {@link ResourceLeakDetector} when a tracked
 * buffer is garbage collected unreleased). {@link #collect()} forces GC and allocations, which is
 * when the detector polls its reference queue and reports.
 */
final class LeakWatch implements AutoCloseable {

    private final Logger logger = (Logger) LoggerFactory.getLogger(ResourceLeakDetector.class);
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    LeakWatch() {
        appender.start();
        logger.addAppender(appender);
    }

    /** Leak reports seen so far, after a GC and enough allocations to flush the detector. */
    List<String> collect() throws InterruptedException {
        for (int round = 0; round < 3; round++) {
            System.gc();
            Thread.sleep(50);
            for (int i = 0; i < 500; i++) {
                ByteBuf b = PooledByteBufAllocator.DEFAULT.buffer(16);
                b.release();
                b = PooledByteBufAllocator.DEFAULT.directBuffer(16);
                b.release();
            }
        }
        synchronized (appender.list) {
            return appender.list.stream().map(ILoggingEvent::getFormattedMessage)
                    .filter(m -> m.contains("LEAK")).collect(Collectors.toList());
        }
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        appender.stop();
    }
}
