import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * A bounded FLIP-27 source that reads a scenario's records in the scenario's order, one record
 * per poll, each through the output of its split (Flink's per-split watermarks): with several
 * splits a record's tag names its split. One reader (parallelism 1) gets every split. Splits named in {@code idle} have no records and are marked
 * idle before the first record, as a reader marks an empty partition.
 */
public class ScriptedSource implements Source<Event, ScriptedSource.Split, Integer> {
    private final ArrayList<Event> records;
    private final ArrayList<String> splits;
    private final HashSet<String> idle;

    public ScriptedSource(List<Event> records, List<String> splits, Set<String> idle) {
        this.records = new ArrayList<>(records);
        this.splits = new ArrayList<>(splits);
        this.idle = new HashSet<>(idle);
    }

    /** A split is its name; where reading stands is the reader's business (no checkpoints). */
    public static class Split implements SourceSplit {
        final String id;

        Split(String id) {
            this.id = id;
        }

        @Override
        public String splitId() {
            return id;
        }
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.BOUNDED;
    }

    @Override
    public SplitEnumerator<Split, Integer> createEnumerator(SplitEnumeratorContext<Split> context) {
        return new Enumerator(context, splits);
    }

    @Override
    public SplitEnumerator<Split, Integer> restoreEnumerator(
            SplitEnumeratorContext<Split> context, Integer checkpoint) {
        return new Enumerator(context, splits);
    }

    @Override
    public SimpleVersionedSerializer<Split> getSplitSerializer() {
        return new SplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<Integer> getEnumeratorCheckpointSerializer() {
        return new NothingSerializer();
    }

    @Override
    public SourceReader<Event, Split> createReader(SourceReaderContext context) {
        return new Reader(records, idle);
    }

    /** Gives every split to the one reader at once, then says there are no more. */
    static class Enumerator implements SplitEnumerator<Split, Integer> {
        private final SplitEnumeratorContext<Split> context;
        private final List<String> splits;

        Enumerator(SplitEnumeratorContext<Split> context, List<String> splits) {
            this.context = context;
            this.splits = splits;
        }

        @Override
        public void start() {}

        @Override
        public void handleSplitRequest(int subtask, String host) {}

        @Override
        public void addSplitsBack(List<Split> returned, int subtask) {}

        @Override
        public void addReader(int subtask) {
            for (String id : splits) {
                context.assignSplit(new Split(id), subtask);
            }
            context.signalNoMoreSplits(subtask);
        }

        @Override
        public Integer snapshotState(long checkpointId) {
            return 0;
        }

        @Override
        public void close() {}
    }

    /** Emits one record per poll through its split's output, once every split has come. */
    static class Reader implements SourceReader<Event, Split> {
        private final List<Event> records;
        private final Set<String> idle;
        private final List<String> assigned = new ArrayList<>();
        private final Map<String, SourceOutput<Event>> outputs = new LinkedHashMap<>();
        private final CompletableFuture<Void> ready = new CompletableFuture<>();
        private int next = 0;

        Reader(List<Event> records, Set<String> idle) {
            this.records = records;
            this.idle = idle;
        }

        @Override
        public void start() {}

        @Override
        public InputStatus pollNext(ReaderOutput<Event> output) {
            if (!ready.isDone()) {
                return InputStatus.NOTHING_AVAILABLE;
            }
            if (outputs.isEmpty()) {
                openOutputs(output);
            }
            if (next >= records.size()) {
                return InputStatus.END_OF_INPUT;
            }
            Event event = records.get(next++);
            outputs.get(assigned.size() == 1 ? assigned.get(0) : event.tag).collect(event);
            return next < records.size() ? InputStatus.MORE_AVAILABLE : InputStatus.END_OF_INPUT;
        }

        private void openOutputs(ReaderOutput<Event> output) {
            for (String id : assigned) {
                SourceOutput<Event> split = output.createOutputForSplit(id);
                if (idle.contains(id)) {
                    split.markIdle();
                }
                outputs.put(id, split);
            }
        }

        @Override
        public List<Split> snapshotState(long checkpointId) {
            return new ArrayList<>();
        }

        @Override
        public CompletableFuture<Void> isAvailable() {
            return ready;
        }

        @Override
        public void addSplits(List<Split> splits) {
            for (Split split : splits) {
                assigned.add(split.id);
            }
        }

        @Override
        public void notifyNoMoreSplits() {
            ready.complete(null);
        }

        @Override
        public void close() {}
    }

    static class SplitSerializer implements SimpleVersionedSerializer<Split> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Split split) {
            return split.id.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public Split deserialize(int version, byte[] bytes) {
            return new Split(new String(bytes, StandardCharsets.UTF_8));
        }
    }

    static class NothingSerializer implements SimpleVersionedSerializer<Integer> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Integer nothing) {
            return new byte[0];
        }

        @Override
        public Integer deserialize(int version, byte[] bytes) {
            return 0;
        }
    }
}
