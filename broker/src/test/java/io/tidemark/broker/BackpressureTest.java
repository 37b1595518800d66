package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Goal: with more pipelined requests than kafka.max.inflight.requests.per.connection, the broker
 * parks the extra frames (and stops reading) yet answers every request, in request order.
 */
class BackpressureTest {

  static TestBroker broker;

  @BeforeAll
  static void start() throws Exception {
    broker = new TestBroker(Map.of("kafka.max.inflight.requests.per.connection", "2"));
    try (var admin = broker.admin()) {
      admin.createTopics(List.of(new NewTopic("quiet", 1, (short) 1))).all().get();
    }
  }

  @AfterAll
  static void stop() {
    broker.close();
  }

  @Test
  void pipelinedRequestsBeyondTheBoundAreAnsweredInOrder() throws Exception {
    try (RawConnection c = new RawConnection(broker.broker.port())) {
      short fv = 12;
      List<Integer> ids = new ArrayList<>();
      List<Boolean> isFetch = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        if (i % 3 == 2) {
          ids.add(c.send(new ApiVersionsRequest.Builder(), (short) 3));
          isFetch.add(false);
        } else {
          FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(200).setMinBytes(1)
              .setMaxBytes(1 << 20).setSessionId(0).setSessionEpoch(-1);
          fetch.topics().add(new FetchRequestData.FetchTopic().setTopic("quiet").setPartitions(List.of(
              new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20))));
          ids.add(c.send(new FetchRequest.SimpleBuilder(fetch), fv));
          isFetch.add(true);
        }
      }
      for (int i = 0; i < ids.size(); i++) {
        if (isFetch.get(i)) {
          FetchResponse r = (FetchResponse) c.receive(ApiKeys.FETCH, fv, ids.get(i));
          assertThat(r.error()).isEqualTo(Errors.NONE);
        } else {
          assertThat(c.receive(ApiKeys.API_VERSIONS, (short) 3, ids.get(i))).isInstanceOf(ApiVersionsResponse.class);
        }
      }
    }
  }
}
