package io.tidemark.table.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.table.config.TableTopicConfig.ConvertType;
import io.tidemark.table.config.TableTopicConfig.ErrorTolerance;
import io.tidemark.table.config.TableTopicConfig.TransformType;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Goal: table topic settings parse with documented defaults, accept automq aliases, and reject bad values naming the key. */
class TableTopicConfigTest {

  @Test
  void defaultsMatchTheDeclarations() {
    // goal: an empty config gives the declared defaults
    TableTopicConfig c = TableTopicConfig.defaults();
    assertThat(c.enabled()).isFalse();
    assertThat(c.commitIntervalMs()).isEqualTo(60_000);
    assertThat(c.namespace()).isEqualTo("default");
    assertThat(c.tableNameFor("orders")).isEqualTo("orders");
    assertThat(c.valueConvert()).isEqualTo(ConvertType.RAW);
    assertThat(c.keyConvert()).isEqualTo(ConvertType.STRING);
    assertThat(c.valueTransform()).isEqualTo(TransformType.NONE);
    assertThat(c.partitionBy()).isEmpty();
    assertThat(c.errorTolerance()).isEqualTo(ErrorTolerance.INVALID_DATA);
    assertThat(c.dlqEnabled()).isFalse();
    assertThat(TableTopicConfig.KEYS).extracting(TableTopicConfig.Key::name).doesNotHaveDuplicates()
        .allMatch(n -> n.startsWith(TableTopicConfig.PREFIX));
    assertThat(TableTopicConfig.KEYS).allSatisfy(k -> assertThat(k.doc()).isNotBlank());
  }

  @Test
  void everySettingParsesAndAutomqAliasesMapOntoTheSameSettings() {
    // goal: canonical names and automq.table.topic.* aliases set the same fields; other topic configs are ignored
    TableTopicConfig c = TableTopicConfig.parse(Map.of(
        "automq.table.topic.enable", "true",
        "automq.table.topic.commit.interval.ms", "1000",
        "table.topic.namespace", "analytics",
        "table.topic.table.name", "clicks_v1",
        "automq.table.topic.convert.value.type", "JSON",
        "table.topic.convert.key.type", "raw",
        "table.topic.transform.value.type", "flatten",
        "table.topic.partition.by", "[day(ts)]",
        "automq.table.topic.errors.tolerance", "none",
        "retention.ms", "1000"));
    assertThat(c.enabled()).isTrue();
    assertThat(c.commitIntervalMs()).isEqualTo(1000);
    assertThat(c.namespace()).isEqualTo("analytics");
    assertThat(c.tableNameFor("clicks")).isEqualTo("clicks_v1");
    assertThat(c.valueConvert()).isEqualTo(ConvertType.JSON);
    assertThat(c.keyConvert()).isEqualTo(ConvertType.RAW);
    assertThat(c.valueTransform()).isEqualTo(TransformType.FLATTEN);
    assertThat(c.partitionBy()).contains("[day(ts)]");
    assertThat(c.errorTolerance()).isEqualTo(ErrorTolerance.NONE);
  }

  @Test
  void badValuesAreRejectedWithTheKeyInTheMessage() {
    // goal: each invalid input fails with a message naming the setting
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.COMMIT_INTERVAL_MS, "999")))
        .hasMessageContaining(TableTopicConfig.COMMIT_INTERVAL_MS);
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.COMMIT_INTERVAL_MS, "soon")))
        .hasMessageContaining(TableTopicConfig.COMMIT_INTERVAL_MS);
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.CONVERT_VALUE_TYPE, "xml")))
        .hasMessageContaining(TableTopicConfig.CONVERT_VALUE_TYPE).hasMessageContaining("by_latest_schema");
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.ENABLE, "yes")))
        .hasMessageContaining(TableTopicConfig.ENABLE);
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of("table.topic.upsert.mode", "true")))
        .hasMessageContaining("unknown table topic config table.topic.upsert.mode");
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.NAMESPACE, " ")))
        .hasMessageContaining(TableTopicConfig.NAMESPACE);
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(
        "table.topic.errors.tolerance", "none", "automq.table.topic.errors.tolerance", "all")))
        .hasMessageContaining("given twice");
  }

  @Test
  void upsertSettingsParseWithAliasesAndAreImpliedByCdcDebeziumAndCompaction() {
    // goal: upsert is off by default, on when set (either name), implied by cdc.field, a debezium transform and a
    // compacted topic; id columns default to the key; op values are configurable; bad combinations name the key
    TableTopicConfig.Upsert off = TableTopicConfig.defaults().upsert();
    assertThat(off.enabled()).isFalse();
    assertThat(off.idIsKey()).isTrue();
    assertThat(off.upsertOps()).containsExactly("c", "u", "r", "I", "U");
    assertThat(off.deleteOps()).containsExactly("d", "D");
    assertThat(TableTopicConfig.defaults().formatVersion()).isEqualTo(2);

    TableTopicConfig.Upsert aliased = TableTopicConfig.parse(Map.of("automq.table.topic.upsert.enable", "true",
        "automq.table.topic.id.columns", "[tenant, id]", "table.topic.convert.value.type", "json")).upsert();
    assertThat(aliased.enabled()).isTrue();
    assertThat(aliased.idColumns()).containsExactly("tenant", "id");

    TableTopicConfig.Upsert cdc = TableTopicConfig.parse(Map.of("automq.table.topic.cdc.field", "kind",
        "table.topic.cdc.upsert.values", "[ins, upd]", "table.topic.cdc.delete.values", "del",
        "table.topic.convert.value.type", "json")).upsert();
    assertThat(cdc.enabled()).isTrue();
    assertThat(cdc.cdcField()).contains("kind");
    assertThat(cdc.upsertOps()).containsExactly("ins", "upd");
    assertThat(cdc.deleteOps()).containsExactly("del");

    TableTopicConfig debezium = TableTopicConfig.parse(Map.of("automq.table.topic.transform.value.type", "flatten_debezium",
        "table.topic.convert.value.type", "by_schema_id"));
    assertThat(debezium.upsert().enabled()).isTrue();
    assertThat(debezium.valueTransform().flattens()).isTrue();
    assertThat(TableTopicConfig.parse(Map.of("cleanup.policy", "delete, compact")).upsert().enabled()).isTrue();
    assertThat(TableTopicConfig.parse(Map.of("cleanup.policy", "delete")).upsert().enabled()).isFalse();
    assertThat(TableTopicConfig.parse(Map.of("table.topic.id.columns", "[_kafka_key]")).upsert().idIsKey()).isTrue();
    assertThat(TableTopicConfig.parse(Map.of("automq.table.topic.format.version", "3")).formatVersion()).isEqualTo(3);

    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.FORMAT_VERSION, "4")))
        .hasMessageContaining(TableTopicConfig.FORMAT_VERSION);
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.CDC_FIELD, "op")))
        .hasMessageContaining(TableTopicConfig.CDC_FIELD).hasMessageContaining("value columns");
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.ID_COLUMNS, "[id]")))
        .hasMessageContaining(TableTopicConfig.ID_COLUMNS);
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.ID_COLUMNS, "[id, id]",
        TableTopicConfig.CONVERT_VALUE_TYPE, "json"))).hasMessageContaining("twice");
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.ID_COLUMNS, "[_kafka_offset]",
        TableTopicConfig.CONVERT_VALUE_TYPE, "json"))).hasMessageContaining(TableTopicConfig.ID_COLUMNS);
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.CDC_DELETE_VALUES, "[c]")))
        .hasMessageContaining("in both");
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.ID_COLUMNS, "[id",
        TableTopicConfig.CONVERT_VALUE_TYPE, "json"))).hasMessageContaining("list");
  }

  @Test
  void partitionByParsesIcebergTransformsAndRejectsMalformedLists() {
    // goal: the partition.by list reads identity, time, bucket and truncate transforms; bad entries name the key
    PartitionBy p = PartitionBy.parse("[day(ts), bucket(user_id, 16), truncate(name, 4), region, hour( t )]");
    assertThat(p.fields()).extracting(PartitionBy.Field::icebergTransform)
        .containsExactly("day", "bucket[16]", "truncate[4]", "identity", "hour");
    assertThat(p.fields()).extracting(PartitionBy.Field::column).containsExactly("ts", "user_id", "name", "region", "t");
    assertThat(PartitionBy.parse("[]").fields()).isEmpty();
    assertThatThrownBy(() -> TableTopicConfig.parse(Map.of(TableTopicConfig.PARTITION_BY, "[bucket(x)]")))
        .hasMessageContaining(TableTopicConfig.PARTITION_BY).hasMessageContaining("needs a width");
    assertThatThrownBy(() -> PartitionBy.parse("[week(ts)]")).hasMessageContaining("unknown transform week");
    assertThatThrownBy(() -> PartitionBy.parse("[day(ts, 3)]")).hasMessageContaining("takes no width");
    assertThatThrownBy(() -> PartitionBy.parse("[a b]")).hasMessageContaining("cannot read");
  }
}
