package io.strata.inference;

import org.junit.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class AdmissionTests {

    @Test
    public void testTryAcquire_underContention_neverAdmitsMoreThanTheLimit() throws Exception {
        Admission admission = new Admission(3);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger mostInside = new AtomicInteger();
        LongAdder admitted = new LongAdder();
        LongAdder refused = new LongAdder();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 20_000; i++) {
                    if (admission.tryAcquire()) {
                        mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        inside.decrementAndGet();
                        admission.release();
                        admitted.increment();
                    } else {
                        refused.increment();
                    }
                }
            });
            threads.add(thread);
            thread.start();
        }
        go.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        assertTrue("at most the limit at once: " + mostInside.get(), mostInside.get() <= 3);
        assertEquals(8 * 20_000, admitted.sum() + refused.sum());
        assertEquals("every admitted task released", 0, admission.pending());
    }

    @Test
    public void testSetLimit_belowPending_refusesUntilEnoughAreReleased() {
        Admission admission = new Admission(2);
        assertTrue(admission.tryAcquire());
        assertTrue(admission.tryAcquire());
        assertFalse(admission.tryAcquire());
        admission.setLimit(1);
        admission.release();
        assertFalse("1 pending, limit 1", admission.tryAcquire());
        admission.release();
        assertTrue(admission.tryAcquire());
        assertThrows(IllegalArgumentException.class, () -> admission.setLimit(0));
    }
}
