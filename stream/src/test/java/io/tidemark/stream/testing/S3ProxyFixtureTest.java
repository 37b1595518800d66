package io.tidemark.stream.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorages;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reusable S3Proxy fixture: ephemeral port, authentication on, filesystem backend on request. */
class S3ProxyFixtureTest {

  @TempDir
  Path directory;

  @Test
  void filesystemBackendKeepsSignedObjectsOnDiskAndRefusesAnonymousRequests() throws Exception {
    // Goal: start(dir) serves on an ephemeral port, stores objects as plain files (no chunk framing) and requires signatures.
    try (S3ProxyFixture s3 = S3ProxyFixture.start(directory)) {
      assertThat(s3.port()).isPositive();
      assertThat(s3.directory()).isEqualTo(directory);
      byte[] data = "hello, tidemark".getBytes(java.nio.charset.StandardCharsets.UTF_8);
      try (ObjectStorage storage = ObjectStorages.create(s3.settings())) {
        storage.put("dir/object", ByteBuffer.wrap(data)).join();
      }
      assertThat(Files.readAllBytes(directory.resolve(s3.bucket()).resolve("dir").resolve("object"))).isEqualTo(data);

      HttpResponse<String> anonymous = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create(s3.endpoint() + "/" + s3.bucket() + "/dir/object")).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(anonymous.statusCode()).isEqualTo(403);
    }
  }
}
