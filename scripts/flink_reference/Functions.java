import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.CoGroupFunction;
import org.apache.flink.api.common.functions.JoinFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.co.ProcessJoinFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessAllWindowFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.functions.windowing.delta.DeltaFunction;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.util.Collector;

/**
 * The scenarios' function vocabulary, in Flink's Java API. Each name here has a twin in
 * tests/engine/end_to_end/flink/functions.py (lockgate's side): the two must compute the same
 * values, and render them as the same JSON lists.
 */
public final class Functions {
    static final ObjectMapper JSON = new ObjectMapper();

    /** What each probe saw, per output stream, in arrival order: [watermark, timestamp, out]. */
    static final Map<String, List<JsonNode>> SEEN = new ConcurrentHashMap<>();

    private Functions() {}

    static ArrayNode list(Object... items) {
        ArrayNode node = JSON.createArrayNode();
        for (Object item : items) {
            node.add(JSON.valueToTree(item));
        }
        return node;
    }

    /** An output as its JSON list: events as [key, time, value], statistics as their list. */
    static JsonNode render(Object out) throws Exception {
        if (out instanceof Event) {
            Event e = (Event) out;
            return list(e.key, e.time, e.value);
        }
        if (out instanceof long[]) {
            return JSON.valueToTree(out);
        }
        return JSON.readTree((String) out);
    }

    static Long start(Window window) {
        return window instanceof TimeWindow ? ((TimeWindow) window).getStart() : null;
    }

    static Long end(Window window) {
        return window instanceof TimeWindow ? ((TimeWindow) window).getEnd() : null;
    }

    static List<Long> sortedValues(Iterable<Event> events) {
        List<Long> values = new ArrayList<>();
        for (Event e : events) {
            values.add(e.value);
        }
        Collections.sort(values);
        return values;
    }

    /** Logs each output with the watermark it came under and its timestamp. */
    public static class Probe<T> extends ProcessFunction<T, Integer> {
        private final String stream;

        Probe(String stream) {
            this.stream = stream;
        }

        @Override
        public void processElement(T value, Context ctx, Collector<Integer> out) throws Exception {
            long watermark = ctx.timerService().currentWatermark();
            Long shown = watermark == Long.MIN_VALUE ? null : watermark;
            ArrayNode entry = list(shown, ctx.timestamp());
            entry.add(render(value));
            SEEN.computeIfAbsent(stream, s -> Collections.synchronizedList(new ArrayList<>()))
                    .add(entry);
        }
    }

    /** "times_ten": the value times ten; key, time and tag kept. */
    public static class TimesTen implements MapFunction<Event, Event> {
        @Override
        public Event map(Event e) {
            return new Event(e.key, e.time, e.value * 10, e.tag);
        }
    }

    /** "forget_time": the time field becomes -1; only the record's timestamp keeps its time. */
    public static class ForgetTime implements MapFunction<Event, Event> {
        @Override
        public Event map(Event e) {
            return new Event(e.key, -1, e.value, e.tag);
        }
    }

    /** "sum": the latest time and the sum of values. */
    public static class Sum implements ReduceFunction<Event> {
        @Override
        public Event reduce(Event a, Event b) {
            return new Event(a.key, Math.max(a.time, b.time), a.value + b.value, a.tag);
        }
    }

    /** "stats": [count, sum of values, least time, greatest time]; merges for sessions. */
    public static class Stats implements AggregateFunction<Event, long[], long[]> {
        @Override
        public long[] createAccumulator() {
            return new long[] {0, 0, Long.MAX_VALUE, Long.MIN_VALUE};
        }

        @Override
        public long[] add(Event e, long[] acc) {
            return new long[] {
                acc[0] + 1, acc[1] + e.value, Math.min(acc[2], e.time), Math.max(acc[3], e.time)
            };
        }

        @Override
        public long[] getResult(long[] acc) {
            return acc.clone();
        }

        @Override
        public long[] merge(long[] a, long[] b) {
            return new long[] {
                a[0] + b[0], a[1] + b[1], Math.min(a[2], b[2]), Math.max(a[3], b[3])
            };
        }
    }

    /** "describe": [key, start, end, count, values sorted]; start and end null when global. */
    public static class Describe<W extends Window>
            extends ProcessWindowFunction<Event, String, String, W> {
        @Override
        public void process(String key, Context ctx, Iterable<Event> events, Collector<String> out) {
            List<Long> values = sortedValues(events);
            W w = ctx.window();
            out.collect(list(key, start(w), end(w), values.size(), values).toString());
        }
    }

    /** "describe" over a whole stream (window_all): the key is null. */
    public static class DescribeAll<W extends Window>
            extends ProcessAllWindowFunction<Event, String, W> {
        @Override
        public void process(Context ctx, Iterable<Event> events, Collector<String> out) {
            List<Long> values = sortedValues(events);
            W w = ctx.window();
            out.collect(list(null, start(w), end(w), values.size(), values).toString());
        }
    }

    /** "describe_reduced": after reduce, [key, start, end, time, value] of the reduced event. */
    public static class DescribeReduced<W extends Window>
            extends ProcessWindowFunction<Event, String, String, W> {
        @Override
        public void process(String key, Context ctx, Iterable<Event> events, Collector<String> out) {
            Event e = events.iterator().next();
            W w = ctx.window();
            out.collect(list(key, start(w), end(w), e.time, e.value).toString());
        }
    }

    /** "describe_stats": after aggregate, [key, start, end, count, sum, least, greatest]. */
    public static class DescribeStats<W extends Window>
            extends ProcessWindowFunction<long[], String, String, W> {
        @Override
        public void process(String key, Context ctx, Iterable<long[]> results, Collector<String> out) {
            long[] r = results.iterator().next();
            W w = ctx.window();
            out.collect(list(key, start(w), end(w), r[0], r[1], r[2], r[3]).toString());
        }
    }

    /**
     * "every_n_and_end": fires every {@code count} records of a window (purging if asked) and
     * once more when the watermark passes the window's end.
     */
    public static class EveryNAndEnd<W extends Window> extends Trigger<Object, W> {
        private final long count;
        private final boolean purge;
        private final ReducingStateDescriptor<Long> seen =
                new ReducingStateDescriptor<>("seen", (a, b) -> a + b, Types.LONG);

        EveryNAndEnd(long count, boolean purge) {
            this.count = count;
            this.purge = purge;
        }

        @Override
        public TriggerResult onElement(Object element, long time, W window, TriggerContext ctx)
                throws Exception {
            ctx.registerEventTimeTimer(window.maxTimestamp());
            ReducingState<Long> state = ctx.getPartitionedState(seen);
            state.add(1L);
            if (state.get() >= count) {
                state.clear();
                return purge ? TriggerResult.FIRE_AND_PURGE : TriggerResult.FIRE;
            }
            return TriggerResult.CONTINUE;
        }

        @Override
        public TriggerResult onEventTime(long time, W window, TriggerContext ctx) {
            return time == window.maxTimestamp() ? TriggerResult.FIRE : TriggerResult.CONTINUE;
        }

        @Override
        public TriggerResult onProcessingTime(long time, W window, TriggerContext ctx) {
            return TriggerResult.CONTINUE;
        }

        @Override
        public void clear(W window, TriggerContext ctx) throws Exception {
            ctx.deleteEventTimeTimer(window.maxTimestamp());
            ctx.getPartitionedState(seen).clear();
        }
    }

    /** "value_distance": how far apart two records' values are. */
    public static class ValueDistance implements DeltaFunction<Event> {
        @Override
        public double getDelta(Event a, Event b) {
            return Math.abs(a.value - b.value);
        }
    }

    /** "pair": a joined pair as [key, left time, left value, right time, right value]. */
    public static class Pair implements JoinFunction<Event, Event, String> {
        @Override
        public String join(Event l, Event r) {
            return list(l.key, l.time, l.value, r.time, r.value).toString();
        }
    }

    /** "pair" of an interval join. */
    public static class IntervalPair extends ProcessJoinFunction<Event, Event, String> {
        @Override
        public void processElement(Event l, Event r, Context ctx, Collector<String> out) {
            out.collect(list(l.key, l.time, l.value, r.time, r.value).toString());
        }
    }

    /** "groups": a co-grouped window as [key, left values sorted, right values sorted]. */
    public static class Groups implements CoGroupFunction<Event, Event, String> {
        @Override
        public void coGroup(Iterable<Event> left, Iterable<Event> right, Collector<String> out) {
            String key = null;
            for (Event e : left) {
                key = e.key;
            }
            for (Event e : right) {
                key = e.key;
            }
            out.collect(list(key, sortedValues(left), sortedValues(right)).toString());
        }
    }

    /**
     * "timers": emits ["element", key, time, value, watermark] per record and registers an
     * event-time timer at time + offset for each offset; a timer emits ["timer", key, time,
     * watermark] and, at an even time, sets one at time + each follow-up.
     */
    public static class Timers extends KeyedProcessFunction<String, Event, String> {
        private final long[] offsets;
        private final long[] followUps;

        Timers(long[] offsets, long[] followUps) {
            this.offsets = offsets;
            this.followUps = followUps;
        }

        static Long shown(long watermark) {
            return watermark == Long.MIN_VALUE ? null : watermark;
        }

        @Override
        public void processElement(Event e, Context ctx, Collector<String> out) {
            long watermark = ctx.timerService().currentWatermark();
            out.collect(list("element", e.key, e.time, e.value, shown(watermark)).toString());
            for (long offset : offsets) {
                ctx.timerService().registerEventTimeTimer(e.time + offset);
            }
        }

        @Override
        public void onTimer(long time, OnTimerContext ctx, Collector<String> out) {
            long watermark = ctx.timerService().currentWatermark();
            out.collect(list("timer", ctx.getCurrentKey(), time, shown(watermark)).toString());
            if (Math.floorMod(time, 2) == 0) {
                for (long followUp : followUps) {
                    ctx.timerService().registerEventTimeTimer(time + followUp);
                }
            }
        }
    }
}
