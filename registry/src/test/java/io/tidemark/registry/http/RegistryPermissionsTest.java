package io.tidemark.registry.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.acl.Authorizer;
import io.tidemark.broker.security.PasswordCheck;
import io.tidemark.broker.security.ScramCredentialStore;
import io.tidemark.registry.http.RegistryPermissions.Needed;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;

/** Goal: each registry request maps to the documented Kafka ACL, and HTTP basic credentials map to Kafka principals. */
class RegistryPermissionsTest {

  private static Needed topic(AclOperation op, String name) {
    return new Needed(op, ResourceType.TOPIC, name);
  }

  private static Needed cluster(AclOperation op) {
    return new Needed(op, ResourceType.CLUSTER, Authorizer.CLUSTER_NAME);
  }

  @Test
  void subjectsAreTheirTopicsUnderTopicNameStrategy() {
    assertThat(RegistryPermissions.topicOf("orders-value")).isEqualTo("orders");
    assertThat(RegistryPermissions.topicOf("orders-key")).isEqualTo("orders");
    assertThat(RegistryPermissions.topicOf("com.example.Order")).isEqualTo("com.example.Order");
    assertThat(RegistryPermissions.topicOf("-value")).isEqualTo("-value");
  }

  @Test
  void everyRouteNeedsTheDocumentedAcl() {
    assertThat(RegistryPermissions.needed("POST", "/subjects/orders-value/versions")).contains(topic(AclOperation.WRITE, "orders"));
    assertThat(RegistryPermissions.needed("POST", "/subjects/orders-value")).contains(topic(AclOperation.READ, "orders"));
    assertThat(RegistryPermissions.needed("GET", "/subjects/orders-value/versions/latest/schema"))
        .contains(topic(AclOperation.READ, "orders"));
    assertThat(RegistryPermissions.needed("DELETE", "/subjects/orders-key")).contains(topic(AclOperation.DELETE, "orders"));
    assertThat(RegistryPermissions.needed("DELETE", "/subjects/orders-key/versions/1"))
        .contains(topic(AclOperation.DELETE, "orders"));
    assertThat(RegistryPermissions.needed("POST", "/compatibility/subjects/orders-value/versions/latest"))
        .contains(topic(AclOperation.READ, "orders"));
    assertThat(RegistryPermissions.needed("GET", "/config/orders-value")).contains(topic(AclOperation.DESCRIBE_CONFIGS, "orders"));
    assertThat(RegistryPermissions.needed("PUT", "/mode/orders-value")).contains(topic(AclOperation.ALTER_CONFIGS, "orders"));
    assertThat(RegistryPermissions.needed("GET", "/config")).contains(cluster(AclOperation.DESCRIBE_CONFIGS));
    assertThat(RegistryPermissions.needed("DELETE", "/mode/")).contains(cluster(AclOperation.ALTER_CONFIGS));
    // percent-encoded subjects are decoded; '+' is not a space in a path
    assertThat(RegistryPermissions.needed("POST", "/subjects/a%2Fb+c-value/versions")).contains(topic(AclOperation.WRITE, "a/b+c"));
    // filtered or checked by the handler
    assertThat(RegistryPermissions.needed("GET", "/subjects")).isEmpty();
    assertThat(RegistryPermissions.needed("GET", "/schemas/ids/1")).isEmpty();
    assertThat(RegistryPermissions.needed("GET", "/")).isEmpty();
  }

  @Test
  void basicCredentialsBecomeKafkaPrincipals() {
    PasswordCheck kafka = new PasswordCheck(Map.of("alice", "alice-secret"), ScramCredentialStore.memory());
    HttpAccess required = new HttpAccess(true, Map.of("ops", "ops-secret"), () -> kafka, Authorizer.off());
    assertThat(required.principalOf(basic("alice:alice-secret"))).isEqualTo("User:alice");
    assertThat(required.principalOf(basic("ops:ops-secret"))).isEqualTo("User:ops");
    for (String header : new String[] {null, "", basic("alice:wrong"), basic("nobody:x"), "Basic !!!", basic("nocolon"),
        "Bearer abc"}) {
      Assertions.assertThatThrownBy(() -> required.principalOf(header)).as(String.valueOf(header))
          .isInstanceOf(HttpAccess.Unauthenticated.class);
    }
    HttpAccess optional = new HttpAccess(false, Map.of(), () -> kafka, Authorizer.off());
    assertThat(optional.required()).isFalse();
    assertThat(optional.principalOf(null)).isEqualTo(HttpAccess.ANONYMOUS);
    assertThat(optional.principalOf(basic("alice:alice-secret"))).isEqualTo("User:alice");
    // wrong credentials are refused even when none are required: never downgraded to anonymous
    Assertions.assertThatThrownBy(() -> optional.principalOf(basic("alice:wrong"))).isInstanceOf(HttpAccess.Unauthenticated.class);
    // an endpoint's own users make credentials required, as before
    assertThat(HttpAccess.endpointUsersOnly(Map.of("ops", "x")).required()).isTrue();
    assertThat(HttpSecurity.authRequired("auto", true)).isTrue();
    assertThat(HttpSecurity.authRequired("auto", false)).isFalse();
    assertThat(HttpSecurity.authRequired("false", true)).isFalse();
    assertThat(HttpSecurity.authRequired("true", false)).isTrue();
  }

  private static String basic(String userInfo) {
    return "Basic " + Base64.getEncoder().encodeToString(userInfo.getBytes(StandardCharsets.UTF_8));
  }
}
