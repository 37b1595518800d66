import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * A plain Apache Iceberg reader, as an engine opens a REST catalog: run as a single source file
 * ({@code java -cp <iceberg-reader.classpath> ReadTable.java <namespace.table> key=value...}) with
 * only Iceberg's jars and a Hadoop client on the class path. The key=value arguments are the
 * catalog properties (those Spark takes as {@code spark.sql.catalog.<name>.<key>}); the catalog and
 * its FileIO are whatever Iceberg builds from them and from what the catalog's /v1/config hands out.
 *
 * <p>Prints {@code io <class>}, {@code location <table location>}, then one line per row:
 * {@code row <partition> <offset> <key> <value>} (tab-separated) of a table topic whose values are
 * strings, then {@code rows <count>}.
 */
public class ReadTable {
  public static void main(String[] args) throws Exception {
    try {
      Class.forName("io.tidemark.table.warehouse.LocalFileIO");
      System.out.println("tidemark-classes present");
    } catch (ClassNotFoundException expected) {
      System.out.println("tidemark-classes absent");
    }
    Map<String, String> properties = new HashMap<>();
    for (int i = 1; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      properties.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    Catalog catalog = CatalogUtil.buildIcebergCatalog("tidemark", properties, new Configuration());
    Table table = catalog.loadTable(TableIdentifier.parse(args[0]));
    System.out.println("io\t" + table.io().getClass().getName());
    System.out.println("location\t" + table.location());
    long count = 0;
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
      for (Record row : rows) {
        System.out.println("row\t" + row.getField("_kafka_partition") + "\t" + row.getField("_kafka_offset") + "\t"
            + row.getField("_kafka_key") + "\t" + row.getField("_kafka_value"));
        count++;
      }
    }
    System.out.println("rows\t" + count);
    if (catalog instanceof AutoCloseable closeable) {
      closeable.close();
    }
  }
}
