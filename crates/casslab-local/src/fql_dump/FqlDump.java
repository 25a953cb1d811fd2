// Prints a Cassandra full query log (a Chronicle Queue written by `nodetool
// enablefullquerylog`) as JSON lines: one per logged query, with its start time (Unix ms), its
// keyspace, its CQL, the native protocol version and its query options as hex (the options hold
// the bound values; casslab decodes them). A batch prints one line per statement. Run with
// Cassandra's jars on the class path: java -cp '<lib>/*' FqlDump.java DIR OUT.jsonl
import java.io.File;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.ValueIn;
import net.openhft.chronicle.wire.WireIn;

public class FqlDump {
    static PrintStream out;

    public static void main(String[] args) throws Exception {
        // the libraries log to stdout; only the lines written here go to the output file
        ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).setLevel(ch.qos.logback.classic.Level.OFF);
        out = new PrintStream(new FileOutputStream(args[1]), false, "UTF-8");
        try (ChronicleQueue q = SingleChronicleQueueBuilder.single(new File(args[0])).readOnly(true).build()) {
            ExcerptTailer t = q.createTailer();
            while (t.readDocument(FqlDump::entry)) {
            }
        }
        out.close();
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder("0x");
        for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    static String json(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') sb.append('\\').append(c);
            else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
            else sb.append(c);
        }
        return sb.append('"').toString();
    }

    static void entry(WireIn w) {
        // the order Cassandra writes them in (BinLog's entry, then FullQueryLogger's)
        w.read("version").int16();
        String type = w.read("type").text();
        long start = w.read("query-start-time").int64();
        int protocol = w.read("protocol-version").int32();
        byte[] options = w.read("query-options").bytes();
        w.read("generated-timestamp").int64();
        w.read("generated-now-in-seconds").int64();
        String keyspace = w.read("keyspace").text();
        String head = "{\"t_ms\":" + start + ",\"keyspace\":" + (keyspace == null ? "null" : json(keyspace)) + ",\"protocol\":" + protocol;
        if ("single-query".equals(type)) {
            String query = w.read("query").text();
            out.println(head + ",\"query\":" + json(query) + ",\"options\":\"" + hex(options) + "\"}");
        } else {
            String batchType = w.read("batch-type").text();
            ValueIn in = w.read("queries");
            int n = in.int32();
            List<String> queries = new ArrayList<>();
            for (int i = 0; i < n; i++) queries.add(in.text());
            ValueIn vin = w.read("values");
            int m = vin.int32();
            for (int i = 0; i < m; i++) {
                int k = vin.int32();
                StringBuilder vals = new StringBuilder("[");
                for (int j = 0; j < k; j++) {
                    byte[] v = vin.bytes();
                    vals.append(j > 0 ? "," : "").append(v == null ? "null" : "\"" + hex(v) + "\"");
                }
                vals.append("]");
                out.println(head + ",\"batch\":" + json(batchType) + ",\"query\":" + json(queries.get(i)) + ",\"values\":" + vals + "}");
            }
        }
    }
}
