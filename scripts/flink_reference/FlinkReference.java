import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.datastream.AllWindowedStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.GlobalWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.evictors.CountEvictor;
import org.apache.flink.streaming.api.windowing.evictors.DeltaEvictor;
import org.apache.flink.streaming.api.windowing.evictors.Evictor;
import org.apache.flink.streaming.api.windowing.evictors.TimeEvictor;
import org.apache.flink.streaming.api.windowing.triggers.CountTrigger;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.PurgingTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.util.OutputTag;

/**
 * Runs scenarios described in tests/engine/end_to_end/flink/scenarios/*.json on Apache Flink
 * (DataStream API, parallelism 1, streaming mode) and writes what each output stream received
 * as [watermark, timestamp, output] entries to the fixture file beside the scenario.
 *
 * <p>Usage: java FlinkReference SCENARIO.json FIXTURE.json [SCENARIO.json FIXTURE.json ...]
 *
 * <p>Watermarks are made per record, never periodically (the auto-watermark interval is 0): after
 * each record, max timestamp seen - out_of_orderness - 1, Flink's BoundedOutOfOrderness rule.
 */
public final class FlinkReference {
    static final OutputTag<Event> LATE = new OutputTag<>("late", TypeInformation.of(Event.class));
    static final KeySelector<Event, String> BY_KEY = e -> e.key;

    private FlinkReference() {}

    public static void main(String[] args) throws Exception {
        for (int i = 0; i + 1 < args.length; i += 2) {
            JsonNode scenario = Functions.JSON.readTree(new File(args[i]));
            Functions.SEEN.clear();
            run(scenario);
            ObjectNode fixture = Functions.JSON.createObjectNode();
            ObjectNode streams = fixture.putObject("streams");
            for (String name : new String[] {"main", "late"}) {
                List<JsonNode> seen = Functions.SEEN.get(name);
                if (seen != null) {
                    streams.putArray(name).addAll(seen);
                }
            }
            Functions.JSON.writerWithDefaultPrettyPrinter().writeValue(new File(args[i + 1]), fixture);
            System.out.println("wrote " + args[i + 1]);
        }
        System.out.println("flink " + EnvironmentInformation.getVersion());
    }

    /**
     * Twenty ports from FLINK_REFERENCE_PORTS (default 30840), inside the range the session
     * running the script may use.
     */
    static Configuration configuration() {
        String from = System.getenv().getOrDefault("FLINK_REFERENCE_PORTS", "30840");
        int base = Integer.parseInt(from);
        Configuration c = new Configuration();
        c.setString("rest.bind-port", base + "-" + (base + 9));
        c.setString("taskmanager.data.port", String.valueOf(base + 10));
        c.setString("blob.server.port", (base + 11) + "-" + (base + 15));
        c.setString("metrics.internal.query-service.port", (base + 16) + "-" + (base + 19));
        c.setString("pipeline.auto-watermark-interval", "0 ms");
        c.setString("execution.runtime-mode", "STREAMING");
        return c;
    }

    static void run(JsonNode scenario) throws Exception {
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(configuration());
        env.setParallelism(1);
        env.setRuntimeMode(RuntimeExecutionMode.STREAMING);
        DataStream<Event> stream = source(env, scenario);
        for (JsonNode step : scenario.path("steps")) {
            stream = step(stream, step);
        }
        job(stream, scenario.get("job"));
        env.execute(scenario.path("about").asText("scenario"));
    }

    static DataStream<Event> source(StreamExecutionEnvironment env, JsonNode scenario) {
        List<Event> records = new ArrayList<>();
        for (JsonNode r : scenario.get("records")) {
            String tag = r.size() > 3 ? r.get(3).asText() : null;
            records.add(new Event(r.get(0).asText(), r.get(1).asLong(), r.get(2).asLong(), tag));
        }
        List<String> splits = new ArrayList<>();
        for (JsonNode s : scenario.path("source").path("splits")) {
            splits.add(s.asText());
        }
        if (splits.isEmpty()) {
            splits.add("main");
        }
        HashSet<String> idle = new HashSet<>();
        for (JsonNode s : scenario.path("source").path("idle")) {
            idle.add(s.asText());
        }
        long delay = scenario.get("watermarks").get("out_of_orderness").asLong();
        WatermarkStrategy<Event> strategy =
                WatermarkStrategy.<Event>forGenerator(ctx -> new PerRecord(delay))
                        .withTimestampAssigner((e, previous) -> e.time);
        return env.fromSource(
                new ScriptedSource(records, splits, idle),
                strategy,
                "records",
                TypeInformation.of(Event.class));
    }

    /** After every record, the newest timestamp seen - out_of_orderness - 1. */
    static class PerRecord implements WatermarkGenerator<Event> {
        private final long delay;
        private long newest = Long.MIN_VALUE;

        PerRecord(long delay) {
            this.delay = delay;
        }

        @Override
        public void onEvent(Event e, long timestamp, WatermarkOutput output) {
            newest = Math.max(newest, timestamp);
            output.emitWatermark(new Watermark(newest - delay - 1));
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {}
    }

    static MapFunction<Event, Event> mapFunction(String name) {
        switch (name) {
            case "times_ten":
                return new Functions.TimesTen();
            case "forget_time":
                return new Functions.ForgetTime();
            default:
                throw new IllegalArgumentException("no map function " + name);
        }
    }

    static DataStream<Event> step(DataStream<Event> stream, JsonNode step) {
        if (step.has("map")) {
            return stream.map(mapFunction(step.get("map").asText()));
        }
        if (step.has("window")) {
            return Windows.reduced(stream, step.get("window"));
        }
        DataStream<Event> union = null;
        Iterator<Map.Entry<String, JsonNode>> branches = step.get("union").fields();
        while (branches.hasNext()) {
            Map.Entry<String, JsonNode> branch = branches.next();
            DataStream<Event> part = tagged(stream, branch.getKey());
            if (!branch.getValue().isNull()) {
                part = part.map(mapFunction(branch.getValue().asText()));
            }
            union = union == null ? part : union.union(part);
        }
        return union;
    }

    static DataStream<Event> tagged(DataStream<Event> stream, String tag) {
        return stream.filter(e -> tag.equals(e.tag));
    }

    static <T> void probe(DataStream<T> stream, String name) {
        stream.process(new Functions.Probe<T>(name)).returns(Types.INT).sinkTo(new DiscardingSink<>());
    }

    static void job(DataStream<Event> stream, JsonNode job) {
        if (job.has("window")) {
            Windows.build(stream, job.get("window"));
        } else if (job.has("timers")) {
            long[] offsets = longs(job.get("timers").path("offsets"));
            long[] followUps = longs(job.get("timers").path("follow_ups"));
            Functions.Timers timers = new Functions.Timers(offsets, followUps);
            probe(stream.keyBy(BY_KEY, Types.STRING).process(timers), "main");
        } else if (job.has("join")) {
            joins(stream, job.get("join"));
        } else {
            intervalJoin(stream, job.get("interval_join"));
        }
    }

    static long[] longs(JsonNode list) {
        long[] values = new long[list.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = list.get(i).asLong();
        }
        return values;
    }

    static void joins(DataStream<Event> stream, JsonNode join) {
        DataStream<Event> left = tagged(stream, "left");
        DataStream<Event> right = tagged(stream, "right");
        WindowAssigner<Object, ?> assigner = Windows.assigner(join.get("assigner"));
        if (join.get("kind").asText().equals("join")) {
            probe(
                    left.join(right)
                            .where(BY_KEY, Types.STRING)
                            .equalTo(BY_KEY, Types.STRING)
                            .window((WindowAssigner) assigner)
                            .apply(new Functions.Pair(), Types.STRING),
                    "main");
        } else {
            probe(
                    left.coGroup(right)
                            .where(BY_KEY, Types.STRING)
                            .equalTo(BY_KEY, Types.STRING)
                            .window((WindowAssigner) assigner)
                            .apply(new Functions.Groups(), Types.STRING),
                    "main");
        }
    }

    static void intervalJoin(DataStream<Event> stream, JsonNode join) {
        KeyedStream<Event, String> left = tagged(stream, "left").keyBy(BY_KEY, Types.STRING);
        KeyedStream<Event, String> right = tagged(stream, "right").keyBy(BY_KEY, Types.STRING);
        KeyedStream.IntervalJoined<Event, Event, String> joined =
                left.intervalJoin(right)
                        .between(
                                Duration.ofMillis(join.get("lower").asLong()),
                                Duration.ofMillis(join.get("upper").asLong()));
        if (join.path("lower_exclusive").asBoolean(false)) {
            joined = joined.lowerBoundExclusive();
        }
        if (join.path("upper_exclusive").asBoolean(false)) {
            joined = joined.upperBoundExclusive();
        }
        probe(joined.process(new Functions.IntervalPair(), Types.STRING), "main");
    }

    /** The window job: assigner, trigger, evictor, lateness, late output, function style. */
    static final class Windows {
        private Windows() {}

        static WindowAssigner<Object, ?> assigner(JsonNode a) {
            switch (a.get("kind").asText()) {
                case "tumbling":
                    return TumblingEventTimeWindows.of(ms(a, "size"), ms(a, "offset"));
                case "sliding":
                    return SlidingEventTimeWindows.of(ms(a, "size"), ms(a, "slide"), ms(a, "offset"));
                case "session":
                    return EventTimeSessionWindows.withGap(ms(a, "gap"));
                case "global":
                    return GlobalWindows.create();
                default:
                    throw new IllegalArgumentException("no assigner " + a);
            }
        }

        static Duration ms(JsonNode node, String field) {
            return Duration.ofMillis(node.path(field).asLong(0));
        }

        static Trigger trigger(JsonNode t) {
            long count = t.path("count").asLong(0);
            switch (t.get("kind").asText()) {
                case "count":
                    CountTrigger counting = CountTrigger.of(count);
                    return t.path("purging").asBoolean(false) ? PurgingTrigger.of(counting) : counting;
                case "event_time":
                    return t.path("purging").asBoolean(false)
                            ? PurgingTrigger.of(EventTimeTrigger.create())
                            : EventTimeTrigger.create();
                case "every_n_and_end":
                    return new Functions.EveryNAndEnd(count, t.path("purge").asBoolean(false));
                default:
                    throw new IllegalArgumentException("no trigger " + t);
            }
        }

        static Evictor evictor(JsonNode e) {
            boolean after = e.path("after").asBoolean(false);
            switch (e.get("kind").asText()) {
                case "count":
                    return CountEvictor.of(e.get("count").asLong(), after);
                case "time":
                    return TimeEvictor.of(ms(e, "size"), after);
                case "delta":
                    return DeltaEvictor.of(
                            e.get("threshold").asDouble(), new Functions.ValueDistance(), after);
                default:
                    throw new IllegalArgumentException("no evictor " + e);
            }
        }

        /** A window step: its reduced events go on, stamped with their windows' max timestamps. */
        static DataStream<Event> reduced(DataStream<Event> stream, JsonNode w) {
            return configured(stream, w).reduce(new Functions.Sum());
        }

        static void build(DataStream<Event> stream, JsonNode w) {
            if (!w.path("keyed").asBoolean(true)) {
                buildAll(stream, w);
                return;
            }
            SingleOutputStreamOperator<?> out =
                    function(configured(stream, w), w.get("function").asText());
            probe(out, "main");
            if (w.path("late_output").asBoolean(false)) {
                probe(out.getSideOutput(LATE), "late");
            }
        }

        static WindowedStream configured(DataStream<Event> stream, JsonNode w) {
            KeyedStream<Event, String> keyed = stream.keyBy(BY_KEY, Types.STRING);
            JsonNode a = w.get("assigner");
            WindowedStream windowed;
            if (a.get("kind").asText().equals("count")) {
                windowed =
                        a.has("slide")
                                ? keyed.countWindow(a.get("size").asLong(), a.get("slide").asLong())
                                : keyed.countWindow(a.get("size").asLong());
            } else {
                windowed = keyed.window((WindowAssigner) assigner(a));
            }
            if (w.has("trigger")) {
                windowed = windowed.trigger(trigger(w.get("trigger")));
            }
            if (w.has("evictor")) {
                windowed = windowed.evictor(evictor(w.get("evictor")));
            }
            if (w.has("allowed_lateness")) {
                windowed = windowed.allowedLateness(Duration.ofMillis(w.get("allowed_lateness").asLong()));
            }
            if (w.path("late_output").asBoolean(false)) {
                windowed = windowed.sideOutputLateData(LATE);
            }
            return windowed;
        }

        static SingleOutputStreamOperator<?> function(WindowedStream windowed, String style) {
            TypeInformation<long[]> stats = TypeInformation.of(long[].class);
            switch (style) {
                case "reduce":
                    return windowed.reduce(new Functions.Sum());
                case "aggregate":
                    return windowed.aggregate(new Functions.Stats(), stats, stats);
                case "process":
                    return windowed.process(new Functions.Describe(), Types.STRING);
                case "reduce+process":
                    return windowed.reduce(
                            new Functions.Sum(), new Functions.DescribeReduced(), Types.STRING);
                case "aggregate+process":
                    return windowed.aggregate(
                            new Functions.Stats(),
                            new Functions.DescribeStats(),
                            stats,
                            stats,
                            Types.STRING);
                default:
                    throw new IllegalArgumentException("no window function style " + style);
            }
        }

        static void buildAll(DataStream<Event> stream, JsonNode w) {
            AllWindowedStream all = stream.windowAll((WindowAssigner) assigner(w.get("assigner")));
            if (w.has("allowed_lateness")) {
                all = all.allowedLateness(Duration.ofMillis(w.get("allowed_lateness").asLong()));
            }
            if (w.path("late_output").asBoolean(false)) {
                all = all.sideOutputLateData(LATE);
            }
            SingleOutputStreamOperator<?> out;
            switch (w.get("function").asText()) {
                case "reduce":
                    out = all.reduce(new Functions.Sum());
                    break;
                case "process":
                    out = all.process(new Functions.DescribeAll(), Types.STRING);
                    break;
                default:
                    throw new IllegalArgumentException("window_all takes reduce or process");
            }
            probe(out, "main");
            if (w.path("late_output").asBoolean(false)) {
                probe(out.getSideOutput(LATE), "late");
            }
        }
    }
}
