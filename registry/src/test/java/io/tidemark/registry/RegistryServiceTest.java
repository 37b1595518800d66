package io.tidemark.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.registry.client.SchemaRegistryClient;
import io.tidemark.registry.schema.SchemaType;
import io.tidemark.registry.store.MemorySchemaStore;
import io.tidemark.stream.config.Settings;
import java.net.URI;
import org.junit.jupiter.api.Test;

/** Goal: the service wiring (config from settings, replay, REST on the configured port) serves clients and restarts on its log. */
class RegistryServiceTest {

  @Test
  void startsFromSettingsAndServesAfterRestart() {
    // Goal: a service built from Settings answers a real client, and a second service on the same log sees the same ids.
    MemorySchemaStore store = new MemorySchemaStore();
    Settings settings = Settings.empty().with(RegistryConfig.PORT.name(), "0").with(RegistryConfig.HOST.name(), "127.0.0.1");
    int id;
    try (RegistryService service = new RegistryService(RegistryConfig.from(settings), store).start()) {
      assertThat(service.port()).isPositive();
      id = new SchemaRegistryClient(URI.create("http://127.0.0.1:" + service.port()), 10)
          .register("orders-value", SchemaType.AVRO, "\"string\"");
      assertThatThrownBy(service::start).isInstanceOf(IllegalStateException.class);
    }
    try (RegistryService again = new RegistryService(RegistryConfig.from(settings), store).start()) {
      SchemaRegistryClient client = new SchemaRegistryClient(URI.create("http://127.0.0.1:" + again.port()), 10);
      assertThat(client.latest("orders-value").id()).isEqualTo(id);
    }
  }
}
