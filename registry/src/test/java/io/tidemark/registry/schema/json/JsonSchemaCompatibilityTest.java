package io.tidemark.registry.schema.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.registry.schema.InvalidSchemaException;
import io.tidemark.registry.schema.ParsedSchema;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Goal: the JSON Schema evolution rules accept widening changes and name each narrowing one. */
class JsonSchemaCompatibilityTest {
  private final JsonSchemaFormat format = new JsonSchemaFormat();

  private ParsedSchema parse(String text) {
    return format.parse(text, List.of(), List.of());
  }

  /** Messages for "new reads data written with old". */
  private List<String> backward(String oldSchema, String newSchema) {
    return parse(newSchema).readerIncompatibilities(parse(oldSchema));
  }

  @Test
  void invalidSchemasAreRejected() {
    // Goal: documents that break the draft meta-schema or are not JSON objects are invalid.
    assertThatThrownBy(() -> parse("{\"type\": 5}")).isInstanceOf(InvalidSchemaException.class);
    assertThatThrownBy(() -> parse("{\"type\": \"object\", \"required\": \"a\"}")).isInstanceOf(InvalidSchemaException.class);
    assertThatThrownBy(() -> parse("[1,2]")).isInstanceOf(InvalidSchemaException.class);
    assertThatThrownBy(() -> parse("{\"type\":")).isInstanceOf(InvalidSchemaException.class);
    assertThat(parse("true").canonical()).isEqualTo("true");
  }

  @Test
  void typeWideningIsCompatibleAndNarrowingIsNot() {
    // Goal: integer -> number reads old data; number -> integer does not.
    assertThat(backward("{\"type\":\"integer\"}", "{\"type\":\"number\"}")).isEmpty();
    assertThat(backward("{\"type\":\"number\"}", "{\"type\":\"integer\"}")).singleElement().asString().contains("TYPE");
    assertThat(backward("{\"type\":\"string\"}", "{\"type\":[\"string\",\"null\"]}")).isEmpty();
    assertThat(backward("{\"type\":[\"string\",\"null\"]}", "{\"type\":\"string\"}")).hasSize(1);
  }

  @Test
  void propertiesFollowOpenAndClosedContentModels() {
    // Goal: property added/removed under open and closed content models follows Confluent's rules.
    String closedA = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"additionalProperties\":false}";
    String closedAB = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"},\"b\":{\"type\":\"integer\"}},\"additionalProperties\":false}";
    String openA = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}";
    String openAB = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"},\"b\":{\"type\":\"integer\"}}}";
    assertThat(backward(closedA, closedAB)).as("adding to a closed writer model").isEmpty();
    assertThat(backward(closedAB, closedA)).as("removing from a closed reader model")
        .anyMatch(m -> m.contains("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"));
    assertThat(backward(openA, openAB)).as("adding to an open writer model")
        .anyMatch(m -> m.contains("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"));
    assertThat(backward(openAB, openA)).as("removing from an open reader model").isEmpty();
    assertThat(backward(openA, closedA)).anyMatch(m -> m.contains("ADDITIONAL_PROPERTIES_REMOVED"));
    assertThat(backward(closedA, openA)).isEmpty();
  }

  @Test
  void requiredEnumsAndBoundsNarrowing() {
    // Goal: newly required properties, lost enum values and tighter bounds are incompatible; the reverse is fine.
    String optional = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"additionalProperties\":false}";
    String required = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":[\"a\"],\"additionalProperties\":false}";
    assertThat(backward(optional, required)).anyMatch(m -> m.contains("REQUIRED_ATTRIBUTE_ADDED"));
    assertThat(backward(required, optional)).isEmpty();
    assertThat(backward("{\"enum\":[\"A\",\"B\"]}", "{\"enum\":[\"A\",\"B\",\"C\"]}")).isEmpty();
    assertThat(backward("{\"enum\":[\"A\",\"B\"]}", "{\"enum\":[\"A\"]}")).anyMatch(m -> m.contains("ENUM_ARRAY_NARROWED"));
    assertThat(backward("{\"type\":\"string\",\"maxLength\":10}", "{\"type\":\"string\",\"maxLength\":20}")).isEmpty();
    assertThat(backward("{\"type\":\"string\",\"maxLength\":20}", "{\"type\":\"string\",\"maxLength\":10}"))
        .anyMatch(m -> m.contains("MAXLENGTH_DECREASED"));
    assertThat(backward("{\"type\":\"integer\"}", "{\"type\":\"integer\",\"minimum\":0}")).anyMatch(m -> m.contains("MINIMUM_INCREASED"));
  }

  @Test
  void nestedRefsArraysAndAlternatives() {
    // Goal: rules apply through local $refs, array items and oneOf alternatives.
    String v1 = "{\"definitions\":{\"n\":{\"type\":\"integer\"}},\"type\":\"array\",\"items\":{\"$ref\":\"#/definitions/n\"}}";
    String v2 = "{\"definitions\":{\"n\":{\"type\":\"number\"}},\"type\":\"array\",\"items\":{\"$ref\":\"#/definitions/n\"}}";
    assertThat(backward(v1, v2)).isEmpty();
    assertThat(backward(v2, v1)).anyMatch(m -> m.contains("/items"));
    String one = "{\"oneOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}";
    String more = "{\"oneOf\":[{\"type\":\"string\"},{\"type\":\"integer\"},{\"type\":\"boolean\"}]}";
    assertThat(backward(one, more)).isEmpty();
    assertThat(backward(more, one)).anyMatch(m -> m.contains("COMBINED_TYPE_SUBSCHEMAS_CHANGED"));
  }

  @Test
  void normalizeSortsKeys() {
    // Goal: key order does not matter after normalize.
    assertThat(parse("{\"type\":\"string\",\"maxLength\":3}").normalize().canonical())
        .isEqualTo(parse("{\"maxLength\":3,\"type\":\"string\"}").normalize().canonical());
    assertThat(parse("{\"type\":\"string\",\"maxLength\":3}").canonical())
        .isNotEqualTo(parse("{\"maxLength\":3,\"type\":\"string\"}").canonical());
  }
}
