package io.tidemark.table.sync;

import io.tidemark.table.config.PartitionBy;
import io.tidemark.table.config.TableTopicConfig;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdatePartitionSpec;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a table's partition spec in step with {@code partition.by}. The table property
 * {@value #PROPERTY} records the {@code partition.by} last applied in full; while the config equals
 * it, the spec is the catalog's (a change made there by someone else is used from the next file on).
 * When the config differs (set or changed), the spec is made equal to it: fields it lacks are added,
 * fields it does not name are removed; a field whose column does not exist yet is added when the
 * column appears (until then the spec is re-aligned every round). A field Iceberg refuses (e.g.
 * day() of a string) is logged and left out. Stateless; called by the table's single owner.
 */
final class PartitionSpecAlignment {

  static final String PROPERTY = "tidemark.partition-by";

  private static final Logger log = LoggerFactory.getLogger(PartitionSpecAlignment.class);

  private PartitionSpecAlignment() {}

  /** @param what names the table in log lines */
  static void align(Table table, PartitionBy partitionBy, String what) {
    List<PartitionBy.Field> fields = partitionBy.fields();
    String wanted = String.join(", ", fields.stream().map(f -> f.icebergTransform() + "(" + f.column() + ")").toList());
    String applied = table.properties().get(PROPERTY);
    if (wanted.equals(applied) || (applied == null && fields.isEmpty())) {
      return;
    }
    Set<String> keep = new HashSet<>();
    List<PartitionBy.Field> missing = new ArrayList<>();
    boolean complete = true;
    for (PartitionBy.Field f : fields) {
      Types.NestedField column = table.schema().findField(f.column());
      if (column == null) {
        complete = false;
        continue;
      }
      Optional<PartitionField> present = table.spec().fields().stream()
          .filter(pf -> pf.sourceId() == column.fieldId() && pf.transform().toString().equals(f.icebergTransform()))
          .findFirst();
      if (present.isPresent()) {
        keep.add(present.get().name());
      } else {
        missing.add(f);
      }
    }
    removeAllBut(table, keep, what, wanted);
    for (PartitionBy.Field f : missing) {
      add(table, f, what);
    }
    if (complete) {
      table.updateProperties().set(PROPERTY, wanted).commit();
    }
    table.refresh();
  }

  private static void removeAllBut(Table table, Set<String> keep, String what, String wanted) {
    List<String> stale = table.spec().fields().stream().map(PartitionField::name).filter(n -> !keep.contains(n)).toList();
    if (!stale.isEmpty()) {
      UpdatePartitionSpec remove = table.updateSpec();
      stale.forEach(remove::removeField);
      remove.commit();
      log.info("{} no longer partitioned by {} ({}={})", what, stale, TableTopicConfig.PARTITION_BY, wanted);
    }
  }

  private static void add(Table table, PartitionBy.Field f, String what) {
    try {
      table.updateSpec().addField(f.term()).commit();
      log.info("{} now partitioned also by {}({})", what, f.icebergTransform(), f.column());
    } catch (ValidationException | IllegalArgumentException | UnsupportedOperationException e) {
      log.warn("{}: cannot partition by {}({}): {}", what, f.icebergTransform(), f.column(), e.getMessage());
    }
    table.refresh();
  }
}
