package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.control.ControlLog;
import io.tidemark.table.node.TableTopicNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the table topics' control topic ({@value ControlLog#TOPIC}) stops growing however many
 * commit rounds go through it. Every message of a round has a key of its own (so compaction alone
 * would keep them all); once a round is in the table its messages are trimmed away by the node
 * ({@code TableTopicNode}, every trim interval, below what every coordinator there still needs).
 * Many rounds, each landing one record: after each, what is left in the control topic comes back
 * to a couple of rounds' messages while its end keeps moving.
 */
class ControlTopicBoundTest {

  private static final int ROUNDS = 6;
  /** Messages a round writes with one node: start, files written, end. */
  private static final int PER_ROUND = 3;
  /** The rounds the control topic may still hold: the last landed one and the one in progress. */
  private static final long BOUND = 2L * PER_ROUND;

  @TempDir
  Path dir;
  private TestWarehouse warehouse;
  private ControlLog control;
  private TableTopicNode node;

  @BeforeEach
  void setUp() {
    warehouse = new TestWarehouse(dir);
    control = ControlLog.local(new TestTopic(ControlLog.TOPIC, 1).logs.get(0), System::currentTimeMillis, 1 << 20);
  }

  @AfterEach
  void tearDown() throws Exception {
    if (node != null) {
      node.close();
    }
    warehouse.close();
  }

  @Test
  void theControlTopicStaysBoundedOverManyRounds() {
    node = new TableTopicNode(new TableTopicNode.Settings(1, 64L << 20, 1 << 20, 2_000, 10_000, 10, 100, 3),
        warehouse.freshCatalog(), null, control, System::currentTimeMillis);
    node.start();
    TestTopic topic = new TestTopic("bounded", 1);
    TableTopicConfig config = TableTopicConfig.parse(Map.of(TableTopicConfig.ENABLE, "true",
        TableTopicConfig.COMMIT_INTERVAL_MS, "1000", TableTopicConfig.TABLE_NAME, "bounded"));
    node.apply("bounded", new TableTopicNode.Assignment("id-1", config, topic.sources(), true, Set.of(1)));
    TableIdentifier table = TableIdentifier.of("default", "bounded");
    long maxHeld = 0;
    for (int round = 0; round < ROUNDS; round++) {
      topic.append(0, List.of(new SimpleRecord(1L, null, ("v" + round).getBytes(StandardCharsets.UTF_8))));
      int landed = round + 1;
      long endBefore = control.endOffset();
      await("round " + round + " lands").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
          .until(() -> warehouse.freshCatalog().tableExists(table) && warehouse.readAll(table).size() == landed);
      await("the control topic trimmed after round " + round).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
          .until(() -> control.endOffset() - control.startOffset() <= BOUND);
      maxHeld = Math.max(maxHeld, control.endOffset() - control.startOffset());
      assertThat(control.endOffset()).as("messages written in round %d", round).isGreaterThan(endBefore);
    }
    assertThat(control.endOffset()).as("messages written over %d rounds", ROUNDS).isGreaterThanOrEqualTo((long) ROUNDS * PER_ROUND);
    assertThat(control.startOffset()).as("messages trimmed").isGreaterThanOrEqualTo(control.endOffset() - BOUND);
    System.out.println("ControlTopicBoundTest: " + control.endOffset() + " control messages over " + ROUNDS + " rounds, "
        + (control.endOffset() - control.startOffset()) + " left, at most " + maxHeld + " seen after a round");
  }
}
