/** Table topics: Kafka topics continuously and exactly once into Apache Iceberg tables. */
package io.tidemark.table;
