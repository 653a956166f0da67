-- A small sample schema for the demo: the shapes cdc has to handle (integer, composite and
-- binary keys, a table without a primary key, the column types users hit).
CREATE DATABASE IF NOT EXISTS shop;
USE shop;

CREATE TABLE customers (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  email VARCHAR(255) NOT NULL UNIQUE,
  name VARCHAR(100) CHARACTER SET utf8mb4 NOT NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB;

CREATE TABLE orders (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer_id INT UNSIGNED NOT NULL,
  total DECIMAL(12,2) NOT NULL,
  status ENUM('new','paid','shipped','cancelled') NOT NULL DEFAULT 'new',
  tags SET('gift','express','fragile') NOT NULL DEFAULT '',
  placed_on DATE NOT NULL,
  notes JSON NULL,
  KEY (customer_id)
) ENGINE=InnoDB;

CREATE TABLE order_lines (
  order_id BIGINT NOT NULL,
  line_no SMALLINT NOT NULL,
  sku CHAR(12) CHARACTER SET latin1 NOT NULL,
  quantity INT NOT NULL,
  price DOUBLE NOT NULL,
  PRIMARY KEY (order_id, line_no)
) ENGINE=InnoDB;

CREATE TABLE sessions (
  token VARBINARY(16) NOT NULL PRIMARY KEY,
  customer_id INT UNSIGNED NULL,
  expires DATETIME(6) NOT NULL
) ENGINE=InnoDB;

CREATE TABLE audit_log (
  happened TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  message TEXT NOT NULL
) ENGINE=InnoDB;

INSERT INTO customers (email, name, created_at) VALUES
  ('ada@example.com', 'Ada Lovelace', '2024-09-04 10:52:12.189'),
  ('grace@example.com', 'Grace Hopper', '2024-09-05 08:00:00.000'),
  ('jose@example.com', 'José Núñez', '2024-09-06 17:30:45.500');

INSERT INTO orders (customer_id, total, status, tags, placed_on, notes) VALUES
  (1, 12.50, 'paid', 'gift', '2024-09-04', '{"coupon": "AUTUMN", "items": 2}'),
  (2, 1999.99, 'shipped', 'express,fragile', '2024-09-05', NULL),
  (3, 0.00, 'new', '', '2024-09-06', '[]');

INSERT INTO order_lines VALUES
  (1, 1, 'SKU-0001', 1, 10.0), (1, 2, 'SKU-0002', 1, 2.5), (2, 1, 'SKU-0100', 3, 666.663333);

INSERT INTO sessions VALUES
  (UNHEX('00112233445566778899AABBCCDDEEFF'), 1, '2024-10-01 00:00:00.000001'),
  (UNHEX('FF'), NULL, '2024-10-02 12:00:00.5');

INSERT INTO audit_log (happened, message) VALUES ('2024-09-04 10:52:12', 'sample loaded');
