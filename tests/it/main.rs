mod http_driver;
