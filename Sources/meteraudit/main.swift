import MeterAuditKit
print("stub")
