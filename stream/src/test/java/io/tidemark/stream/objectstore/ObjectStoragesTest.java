package io.tidemark.stream.objectstore;

import static io.tidemark.stream.objectstore.ObjectStorageContractTest.bytes;
import static io.tidemark.stream.objectstore.ObjectStorageContractTest.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.testing.S3ProxyFixture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Building the configured store from settings, and the start-up check that names the wrong
 * setting (against S3Proxy with authentication on).
 */
class ObjectStoragesTest {
  private static S3ProxyFixture s3;

  @TempDir
  Path directory;

  @BeforeAll
  static void startS3() {
    s3 = S3ProxyFixture.shared();
  }

  /** Fast retries so that the unreachable-endpoint case does not wait long. */
  private static Settings s3Settings() {
    return s3.settings().with("storage.s3.max.attempts", "2").with("storage.s3.retry.base.delay.ms", "10");
  }

  @Test
  void s3SettingsGiveAVerifiedWorkingStore() {
    // Goal: correct S3 settings give a store that writes and reads through S3Proxy.
    try (ObjectStorage storage = ObjectStorages.create(s3Settings())) {
      assertThat(storage).isInstanceOf(S3ObjectStorage.class);
      join(storage.put("from-settings", ByteBuffer.wrap(new byte[] {4, 2})));
      assertThat(bytes(join(storage.get("from-settings")))).containsExactly(4, 2);
    }
  }

  @Test
  void wrongEndpointNamesTheEndpointSetting() throws IOException {
    // Goal: an endpoint where nothing listens fails at start-up with a ConfigException naming storage.s3.endpoint.
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    Settings settings = s3Settings().with("storage.s3.endpoint", "http://127.0.0.1:" + closedPort);
    assertThatThrownBy(() -> ObjectStorages.create(settings))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.key()).isEqualTo("storage.s3.endpoint"))
        .hasMessageContaining("storage.s3.endpoint")
        .hasMessageContaining(String.valueOf(closedPort));
  }

  @Test
  void unknownHostNamesTheEndpointSetting() {
    // Goal: an endpoint host that does not resolve fails at start-up naming storage.s3.endpoint.
    // Bounded attempts: where DNS is unreachable, resolution only ends with the attempt timeout.
    Settings settings = s3Settings().with("storage.s3.endpoint", "http://no-such-host.invalid:9000")
        .with("storage.s3.max.attempts", "1").with("storage.s3.request.timeout.ms", "1500");
    assertThatThrownBy(() -> ObjectStorages.create(settings))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.key()).isEqualTo("storage.s3.endpoint"));
  }

  @Test
  void missingBucketNamesTheBucketSetting() {
    // Goal: a bucket that does not exist fails at start-up with a ConfigException naming storage.s3.bucket.
    Settings settings = s3Settings().with("storage.s3.bucket", "no-such-bucket");
    assertThatThrownBy(() -> ObjectStorages.create(settings))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.key()).isEqualTo("storage.s3.bucket"))
        .hasMessageContaining("storage.s3.bucket")
        .hasMessageContaining("no-such-bucket");
  }

  @Test
  void wrongSecretKeyNamesTheSecretKeySetting() {
    // Goal: a wrong secret key fails at start-up naming storage.s3.secret.key, without printing the secret.
    Settings settings = s3Settings().with("storage.s3.secret.key", "not-the-secret");
    assertThatThrownBy(() -> ObjectStorages.create(settings))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.key()).isEqualTo("storage.s3.secret.key"))
        .hasMessageContaining("storage.s3.secret.key")
        .hasMessageNotContaining("not-the-secret");
  }

  @Test
  void unknownAccessKeyNamesTheAccessKeySetting() {
    // Goal: an access key the server does not know fails at start-up naming storage.s3.access.key.
    Settings settings = s3Settings().with("storage.s3.access.key", "nobody");
    assertThatThrownBy(() -> ObjectStorages.create(settings))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.key()).isEqualTo("storage.s3.access.key"))
        .hasMessageContaining("nobody");
  }

  @Test
  void inconsistentS3SettingsAreRefusedBeforeConnecting() {
    // Goal: a missing bucket setting or a secret without its access key is refused naming the missing setting.
    assertThatThrownBy(() -> ObjectStorages.create(new Settings(Map.of("storage.type", "s3"))))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.key()).isEqualTo("storage.s3.bucket"));
    Settings secretOnly = new Settings(Map.of("storage.type", "s3", "storage.s3.bucket", "b",
        "storage.s3.secret.key", "s"));
    assertThatThrownBy(() -> ObjectStorages.create(secretOnly))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.key()).isEqualTo("storage.s3.access.key"));
    Settings badEndpoint = s3Settings().with("storage.s3.endpoint", "ftp:/nowhere");
    assertThatThrownBy(() -> ObjectStorages.create(badEndpoint))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.key()).isEqualTo("storage.s3.endpoint"));
    assertThatThrownBy(() -> ObjectStorages.create(new Settings(Map.of("storage.type", "tape"))))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.key()).isEqualTo("storage.type"));
  }

  @Test
  void localIsTheDefaultAndUsesTheConfiguredDirectory() throws IOException {
    // Goal: with only a path set, the local store is used and keeps objects in that directory.
    Path root = directory.resolve("objects");
    try (ObjectStorage storage = ObjectStorages.create(new Settings(Map.of("storage.local.path", root.toString())))) {
      assertThat(storage).isInstanceOf(LocalObjectStorage.class);
      join(storage.put("wal/1", ByteBuffer.wrap(new byte[] {1})));
    }
    assertThat(Files.exists(root.resolve("wal~").resolve("1"))).isTrue();
  }

  @Test
  void memoryTypeGivesTheMemoryStore() {
    // Goal: storage.type=memory gives the in-memory store.
    try (ObjectStorage storage = ObjectStorages.create(new Settings(Map.of("storage.type", "memory")))) {
      assertThat(storage).isInstanceOf(MemoryObjectStorage.class);
    }
  }

  @Test
  void everySettingIsDeclaredOnceWithDocumentation() {
    // Goal: the declared keys include each documented setting exactly once, each with a doc string.
    assertThat(ObjectStorageConfig.KEYS).extracting(ConfigKey::name).doesNotHaveDuplicates().contains(
        "storage.type", "storage.local.path", "storage.local.io.threads", "storage.s3.endpoint", "storage.s3.region",
        "storage.s3.bucket", "storage.s3.path.style", "storage.s3.access.key", "storage.s3.secret.key",
        "storage.s3.checksum", "storage.s3.max.concurrency", "storage.s3.max.attempts", "storage.s3.request.timeout.ms");
    assertThat(ObjectStorageConfig.KEYS).allSatisfy(k -> assertThat(k.doc()).isNotBlank());
    assertThat(ObjectStorageConfig.S3_SECRET_KEY.secret()).isTrue();
    assertThat(ObjectStorageConfig.TYPE.defaultValue()).isEqualTo("local");
    assertThat(ObjectStorageConfig.LOCAL_PATH.defaultValue()).isEqualTo("data/objects");
    assertThat(ObjectStorageConfig.S3_CHECKSUM.defaultValue()).isEqualTo("when_required");
    assertThatThrownBy(() -> ObjectStorageConfig.S3_CHECKSUM.parse("always"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("storage.s3.checksum");
  }
}
