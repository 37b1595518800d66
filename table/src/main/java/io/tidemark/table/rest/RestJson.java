package io.tidemark.table.rest;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import io.tidemark.registry.http.HttpGuard;
import java.io.IOException;
import org.apache.iceberg.rest.RESTRequest;
import org.apache.iceberg.rest.RESTSerializers;
import org.apache.iceberg.rest.responses.ErrorResponse;

/**
 * JSON of the REST catalog API, configured as Iceberg's own client reads and writes it: Iceberg's
 * serializers ({@link RESTSerializers}), kebab-case field names, field access, unknown fields
 * ignored. Thread-safe once built (Jackson mappers are).
 */
final class RestJson {

  private final ObjectMapper mapper = new ObjectMapper()
      .setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY)
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
      .setPropertyNamingStrategy(new PropertyNamingStrategies.KebabCaseStrategy());

  /** JSON bounded for bodies of at most {@code maxBodyBytes} (nesting, number and string lengths, see {@link HttpGuard}). */
  RestJson(long maxBodyBytes) {
    HttpGuard.bounded(mapper, maxBodyBytes);
    RESTSerializers.registerAll(mapper);
  }

  /** Parses and validates a request body; malformed or invalid bodies throw (mapped to 400). */
  <T extends RESTRequest> T read(byte[] body, Class<T> type) throws IOException {
    if (body.length == 0) {
      throw new IllegalArgumentException("request body is missing: expected a " + type.getSimpleName());
    }
    T request = mapper.readValue(body, type);
    if (request == null) {
      throw new IllegalArgumentException("request body is null: expected a " + type.getSimpleName());
    }
    request.validate();
    RequestValues.check(request);
    return request;
  }

  String write(Object response) throws JsonProcessingException {
    return mapper.writeValueAsString(response);
  }

  /** An error body; an {@link ErrorResponse} always serializes, the fallback is only for form. */
  String error(ErrorResponse error) {
    try {
      return write(error);
    } catch (JsonProcessingException e) {
      return "{\"error\":{\"message\":\"internal error\",\"type\":\"InternalServerError\",\"code\":500}}";
    }
  }
}
