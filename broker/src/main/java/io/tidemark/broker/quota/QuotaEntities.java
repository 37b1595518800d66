package io.tidemark.broker.quota;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import org.apache.kafka.common.quota.ClientQuotaEntity;

/**
 * The text form of a quota entity, as stored with the controller: its entries in type order, each
 * {@code type=urlencoded-name} or {@code type} alone for the type's default entity, joined by
 * {@code &} ({@code client-id&user=alice} is the default client of user alice). Stateless.
 */
public final class QuotaEntities {
  private QuotaEntities() {}

  public static String encode(ClientQuotaEntity entity) {
    StringJoiner out = new StringJoiner("&");
    new TreeMap<>(entity.entries()).forEach((type, name) -> out.add(name == null ? type
        : type + "=" + URLEncoder.encode(name, StandardCharsets.UTF_8)));
    return out.toString();
  }

  public static ClientQuotaEntity decode(String text) {
    Map<String, String> entries = new HashMap<>();
    for (String part : text.split("&")) {
      int eq = part.indexOf('=');
      if (eq < 0) {
        entries.put(part, null);
      } else {
        entries.put(part.substring(0, eq), URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return new ClientQuotaEntity(entries);
  }
}
