import java.io.Serializable;

/**
 * A scenario's record: a key, an event time in milliseconds, a value and an optional tag (the
 * side of a join, the branch of a union, or the source split it is read from). A Flink POJO.
 */
public class Event implements Serializable {
    public String key;
    public long time;
    public long value;
    public String tag;

    public Event() {}

    public Event(String key, long time, long value, String tag) {
        this.key = key;
        this.time = time;
        this.value = value;
        this.tag = tag;
    }

    @Override
    public String toString() {
        return "Event(" + key + ", " + time + ", " + value + ", " + tag + ")";
    }
}
