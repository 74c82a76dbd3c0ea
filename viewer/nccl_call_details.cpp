#include "nccl_call_details.hpp"

#include <QStringList>

namespace commlens::viewer {
namespace {

// The NCCL collector's side table (docs/schema.md) with its code tables' names; the columns'
// names are what the tooltip shows.
constexpr const char* kDetailsSql = R"sql(
SELECT d.name AS datatype, o.name AS op, printf('%#x', n.stream) AS stream, n.root AS root,
       n.peer AS peer, n.group_depth AS "group depth"
FROM nccl_calls n LEFT JOIN nccl_datatypes d ON d.id = n.datatype LEFT JOIN nccl_ops o ON o.id = n.op
WHERE n.call_id = ?1)sql";

} // namespace

bool has_nccl_call_details(const analysis::Database& database) {
  return database.has_table("nccl_calls") && database.has_column("nccl_calls", "call_id") &&
         database.has_table("nccl_datatypes") && database.has_table("nccl_ops");
}

QString describe_nccl_call(const analysis::Database& database, std::int64_t call_id) {
  if (!has_nccl_call_details(database))
    return {};
  auto query = database.prepare(kDetailsSql);
  query.bind(1, call_id);
  if (!query.step())
    return {};
  QStringList fields;
  for (int column = 0; column < query.column_count(); ++column) {
    const auto value = query.optional_text(column);
    if (!value) // NULL: the function has no such argument
      continue;
    fields << QStringLiteral("%1 <b>%2</b>")
                  .arg(QString::fromStdString(query.column_name(column)).toHtmlEscaped(),
                       QString::fromStdString(*value).toHtmlEscaped());
  }
  return fields.isEmpty() ? QString() : QStringLiteral("<br>NCCL: ") + fields.join(QStringLiteral(", "));
}

} // namespace commlens::viewer
