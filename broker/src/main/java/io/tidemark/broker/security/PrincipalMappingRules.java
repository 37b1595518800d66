package io.tidemark.broker.security;

import io.tidemark.stream.config.ConfigException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Kafka's {@code ssl.principal.mapping.rules}: a list of {@code RULE:pattern/replacement/[LU]}
 * and {@code DEFAULT} entries, comma separated. A certificate's subject DN (RFC 2253 form) is
 * given to each rule in turn; the first whose pattern matches the whole DN names the user
 * (the DN with the pattern replaced, then lower- or upper-cased with {@code L}/{@code U});
 * {@code DEFAULT} names the DN itself. No match: no user (the connection is refused, as Kafka
 * refuses it). Immutable.
 */
public final class PrincipalMappingRules {

  private record Rule(Pattern pattern, String replacement, char caseFold) {}

  private final List<Rule> rules;

  private PrincipalMappingRules(List<Rule> rules) {
    this.rules = rules;
  }

  public static PrincipalMappingRules parse(String text) {
    List<Rule> rules = new ArrayList<>();
    int i = 0;
    String s = text == null ? "" : text;
    while (true) {
      while (i < s.length() && (s.charAt(i) == ',' || Character.isWhitespace(s.charAt(i)))) {
        i++;
      }
      if (i >= s.length()) {
        break;
      }
      if (s.startsWith("DEFAULT", i)) {
        rules.add(new Rule(null, null, ' '));
        i += "DEFAULT".length();
      } else if (s.startsWith("RULE:", i)) {
        int p = i + "RULE:".length();
        int slash1 = s.indexOf('/', p);
        int slash2 = slash1 < 0 ? -1 : s.indexOf('/', slash1 + 1);
        if (slash2 < 0) {
          throw invalid(text, "RULE needs pattern/replacement/");
        }
        char fold = ' ';
        int end = slash2 + 1;
        if (end < s.length() && (s.charAt(end) == 'L' || s.charAt(end) == 'U')) {
          fold = s.charAt(end);
          end++;
        }
        try {
          rules.add(new Rule(Pattern.compile(s.substring(p, slash1)), s.substring(slash1 + 1, slash2), fold));
        } catch (PatternSyntaxException e) {
          throw invalid(text, e.getDescription());
        }
        i = end;
      } else {
        throw invalid(text, "expected RULE: or DEFAULT at position " + i);
      }
    }
    if (rules.isEmpty()) {
      rules.add(new Rule(null, null, ' '));
    }
    return new PrincipalMappingRules(List.copyOf(rules));
  }

  private static ConfigException invalid(String text, String why) {
    return new ConfigException(SecurityConfig.SSL_PRINCIPAL_MAPPING_RULES.name(), text, why);
  }

  /** The user name for a subject DN, or empty when no rule matches. */
  public Optional<String> map(String distinguishedName) {
    for (Rule r : rules) {
      if (r.pattern() == null) {
        return Optional.of(distinguishedName);
      }
      Matcher m = r.pattern().matcher(distinguishedName);
      if (m.matches()) {
        String name = m.replaceAll(r.replacement());
        return Optional.of(switch (r.caseFold()) {
          case 'L' -> name.toLowerCase(Locale.ROOT);
          case 'U' -> name.toUpperCase(Locale.ROOT);
          default -> name;
        });
      }
    }
    return Optional.empty();
  }
}
